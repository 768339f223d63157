import Domain
import Synchronization

/// PostgreSQL's landing path: a visit is acknowledged once the batch carrying it is committed to the tables
/// (`PostgresVisitWriter`, synchronous commit on), so any instance finds its checkout at once and a killed
/// instance leaves nothing behind to replay. There is no journal, so nothing is ever pending.
final class PostgresVisitRecorder: VisitRecorder {
    private let writer: PostgresVisitWriter
    /// The last failure of a landing's visit, cleared by the next one committed (or by the readiness probe's).
    private let lastFailure = Mutex<StorageError?>(nil)
    private let observer = Mutex<IngestionObserver?>(nil)

    /// Opens the visits' own connection to `target` (migrations are applied already).
    init(target: PostgresTarget) throws(StorageError) {
        writer = PostgresVisitWriter(connection: try PostgresConnection(target: target))
    }

    /// Committed in the visit writer's next batch.
    func record(_ visit: Visit, completion: @escaping @Sendable (StorageError?) -> Void) {
        // The completion holds the recorder only until the batch carrying the visit is done.
        writer.submit(visit) { [self] result in
            switch result {
            case .success(let outcome):
                lastFailure.withLock { $0 = nil }
                observer.withLock { $0 }?.call([visit], [outcome])
                completion(nil)
            case .failure(let error):
                if error.code != .closed { lastFailure.withLock { $0 = error } }
                completion(error)
            }
        }
    }

    /// The landing path's own batch writer, waited for.
    func recordInTables(_ visit: Visit) throws(StorageError) -> RecordOutcome {
        try waitForCompletion { completion in writer.submit(visit, completion: completion) }
    }

    func pendingCheckout(_ id: CheckoutID) -> CheckoutRecord? { nil }

    func flush(timeout: Duration) -> Bool { true }

    var backlog: IngestionBacklog { .empty }

    func observe(_ observer: IngestionObserver) {
        self.observer.withLock { $0 = observer }
    }

    var failure: StorageError? { lastFailure.withLock { $0 } }

    /// The probe commits on the same database as visits: when it does, visits do again (a database back from an
    /// outage), even if no landing came to clear the failure (a balancer stopped sending them).
    /// Its failures clear with its next commit, which the readiness probe's proves possible.
    func recheckFailure() {}

    func writerCommitted() {
        lastFailure.withLock { $0 = nil }
    }

    var commitCount: Int { writer.commitCount }

    func close() {
        writer.stop()
    }
}
