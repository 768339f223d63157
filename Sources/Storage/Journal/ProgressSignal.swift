import Dispatch
import Synchronization

/// A signal after each step of progress (a committed batch), heard by the threads waiting on it and only by
/// them: a semaphore signalled with nobody waiting keeps the signal, and signals piled up over a long run would
/// end later waits at once, one by one. A signal between a waiter's check and its wait is missed; waits are short
/// and bounded, and the waiter checks again after each.
final class ProgressSignal: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let waiters = Atomic<Int>(0)

    /// Returns at the next signal, or after `milliseconds`.
    func wait(milliseconds: Int) {
        waiters.add(1, ordering: .sequentiallyConsistent)
        _ = semaphore.wait(timeout: .now() + .milliseconds(milliseconds))
        waiters.subtract(1, ordering: .sequentiallyConsistent)
    }

    /// Wakes a waiting thread, if one waits.
    func signal() {
        if waiters.load(ordering: .sequentiallyConsistent) > 0 { semaphore.signal() }
    }
}
