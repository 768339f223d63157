import Synchronization

/// How other threads talk to an event loop: messages queue under a lock and a `WakeSignal` wakes the loop.
final class LoopMailbox: Sendable {
    enum Message: Sendable {
        /// A handler finished for connection `id` on descriptor `fd`.
        case completed(fd: Int32, id: UInt64, response: HTTPResponse, startedAt: UInt64, request: HTTPRequest)
        /// Stop accepting, finish in-flight requests, close the rest at `deadline` (monotonic ns).
        case drain(deadline: UInt64)
    }

    let wake: WakeSignal
    private let messages = Mutex<[Message]>([])
    /// Set when the loop has stopped; late messages (a handler finishing after a forced stop) are dropped.
    private let closed = Atomic<Bool>(false)

    init() throws(SocketError) {
        wake = try WakeSignal()
    }

    /// Queues a message and wakes the loop. Safe from any thread.
    func post(_ message: Message) {
        guard !closed.load(ordering: .sequentiallyConsistent) else { return }
        // Only the first message of a batch needs to wake the loop: it takes the whole mailbox once awake.
        let wasEmpty = messages.withLock { messages in
            defer { messages.append(message) }
            return messages.isEmpty
        }
        if wasEmpty { wake.signal() }
    }

    /// Every queued message, oldest first; called by the loop when woken.
    func take() -> [Message] {
        wake.reset()
        return messages.withLock { messages in
            defer { messages.removeAll(keepingCapacity: true) }
            return messages
        }
    }

    /// The loop has stopped: drop whatever is posted from now on.
    func close() {
        closed.store(true, ordering: .sequentiallyConsistent)
        messages.withLock { $0.removeAll() }
    }
}
