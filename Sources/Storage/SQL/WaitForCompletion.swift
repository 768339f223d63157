import Dispatch
import Synchronization

/// Blocks until the work `start` hands off completes, and returns its result: the synchronous form of the
/// writers' completion-handler APIs (a caller that must not answer before the commit).
func waitForCompletion<T: Sendable>(
    _ start: (@escaping @Sendable (Result<T, StorageError>) -> Void) -> Void
) throws(StorageError) -> T {
    let done = DispatchSemaphore(value: 0)
    let outcome = Mutex<Result<T, StorageError>?>(nil)
    start { result in
        outcome.withLock { $0 = result }
        done.signal()
    }
    done.wait()
    guard let result = outcome.withLock({ $0 }) else {
        throw StorageError(.closed, "the write finished without a result")
    }
    return try result.get()
}
