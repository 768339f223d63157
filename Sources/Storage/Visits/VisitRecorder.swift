import Domain

/// How a landing's visit becomes durable before the landing answers: the one place the engines differ on the
/// landing path, chosen when the ledger opens. On SQLite the visit is appended to the visit journal (one
/// sequential write and sync for a batch of visits) and folded into the tables moments later
/// (`JournalVisitRecorder`); on PostgreSQL it is committed to the tables in a batch statement, the server's WAL
/// being the durable record every instance sees at once (`PostgresVisitRecorder`). A tool opening a SQLite
/// ledger beside the server records none (`ReaderVisitRecorder`).
protocol VisitRecorder: Sendable {
    /// Records `visit` durably; `completion` runs once it is on disk (nil) or with the error that kept it off.
    /// Nothing may acknowledge the visit before then.
    func record(_ visit: Visit, completion: @escaping @Sendable (StorageError?) -> Void)

    /// Writes `visit` to the tables as this engine's landing path writes them and returns its outcome once
    /// committed: for callers that read it back at once (tests), not for landings.
    func recordInTables(_ visit: Visit) throws(StorageError) -> RecordOutcome

    /// The checkout of a visit recorded but not yet in the tables (nil when there is none), so the page behind a
    /// fresh 303 is found.
    func pendingCheckout(_ id: CheckoutID) -> CheckoutRecord?

    /// Waits (up to `timeout`) until every visit recorded so far is in the tables; true when it is.
    func flush(timeout: Duration) -> Bool

    /// Visits acknowledged but not yet in the tables.
    var backlog: IngestionBacklog { get }

    /// Tells `observer` about each batch of visits once it is in the tables (replacing any earlier observer).
    func observe(_ observer: IngestionObserver)

    /// Why visits are not being recorded right now, or nil when the last ones went through.
    var failure: StorageError? { get }

    /// Why landings are refused right now (their visits cannot be made durable), or nil. It differs from
    /// `failure` only where landings are durable before the tables take them (the journal).
    var landingFailure: StorageError? { get }

    /// The ledger's writer just committed a write (the readiness probe): a recorder whose visits are committed
    /// the same way takes it as proof that they commit again.
    func writerCommitted()

    /// Looks again at a failure only the next visit would clear (the journal's full disk): gone when its cause
    /// is (room again). Readiness asks, since an unready server gets no landings to clear it.
    func recheckFailure()

    /// Transactions this recorder committed on a connection of its own (not through the ledger's writer).
    var commitCount: Int { get }

    /// Records what is queued, then stops; later visits fail with `.closed`.
    func close()
}

extension VisitRecorder {
    var landingFailure: StorageError? { failure }

    /// `flush`, except while the disk refuses writes (full or read-only): the visits waiting then cannot reach the
    /// tables, and a read waiting for them only answered 2 s late. False when not flushed.
    func flushUnlessRefused(timeout: Duration) -> Bool {
        if let failure, [.diskFull, .readOnly].contains(failure.code) { return false }
        return flush(timeout: timeout)
    }
}
