import Domain

/// A SQLite ledger opened by a command-line tool beside a running server (`Ledger.Role.reader`): the visit
/// journal belongs to the server, so landings are refused here and nothing is ever pending in it.
struct ReaderVisitRecorder: VisitRecorder {
    let database: SQLDatabase

    func record(_ visit: Visit, completion: @escaping @Sendable (StorageError?) -> Void) {
        completion(StorageError(.readOnly, "this ledger was opened read-only; only the server records visits"))
    }

    /// Through the ledger's writer, as the tool's other writes go.
    func recordInTables(_ visit: Visit) throws(StorageError) -> RecordOutcome {
        try database.writer.write { connection throws(StorageError) in try TokenStore.insert(visit, into: connection) }
    }

    func pendingCheckout(_ id: CheckoutID) -> CheckoutRecord? { nil }

    func flush(timeout: Duration) -> Bool { true }

    var backlog: IngestionBacklog { .empty }

    func observe(_ observer: IngestionObserver) {}

    var failure: StorageError? { nil }

    /// Its failures clear with its next commit, which the readiness probe's proves possible.
    func recheckFailure() {}

    func writerCommitted() {}

    var commitCount: Int { 0 }

    func close() {}
}
