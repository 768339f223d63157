import Dispatch
import Foundation
import Synchronization

/// Folds journaled visits into SQLite in large transactions through the ledger's single writer, and records in
/// the same transaction how far it got (`settings.journal_applied`), so a replay never applies a visit twice.
final class JournalIngester: Sendable {
    typealias Batch = [(sequence: Int64, visit: Visit)]

    private struct State {
        var queue: Batch = []
        var stopping = false
    }

    /// Most visits per transaction.
    static let maxBatch = 4096

    private let writer: GroupCommitWriter
    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)
    private let onIngested: @Sendable (Batch, [RecordOutcome]) -> Void

    init(writer: GroupCommitWriter, onIngested: @escaping @Sendable (Batch, [RecordOutcome]) -> Void) {
        self.writer = writer
        self.onIngested = onIngested
        let thread = Thread { [self] in
            run()
            stopped.signal()
        }
        thread.name = "linkout-ingester"
        thread.start()
    }

    func enqueue(_ batch: Batch) {
        state.withLock { $0.queue.append(contentsOf: batch) }
        available.signal()
    }

    /// Ingests what is queued, then stops.
    func stop() {
        let first = state.withLock { state in
            defer { state.stopping = true }
            return !state.stopping
        }
        guard first else { return }
        available.signal()
        stopped.wait()
    }

    private func run() {
        while true {
            available.wait()
            while true {
                let batch = state.withLock { state -> Batch in
                    let count = min(state.queue.count, Self.maxBatch)
                    defer { state.queue.removeFirst(count) }
                    return Array(state.queue.prefix(count))
                }
                if batch.isEmpty { break }
                ingest(batch)
            }
            if state.withLock({ $0.stopping && $0.queue.isEmpty }) { return }
        }
    }

    private func ingest(_ batch: Batch) {
        // A failed transaction is retried: these visits were acknowledged and must reach the ledger.
        var delay: UInt32 = 10_000
        while true {
            do {
                let outcomes = try writer.write { connection throws(StorageError) in
                    try Self.apply(batch, to: connection)
                }
                onIngested(batch, outcomes)
                return
            } catch {
                usleep(delay)  // back off before retrying a failed write (disk full, busy), up to a second
                delay = min(delay * 2, 1_000_000)
            }
        }
    }

    /// Applies visits and advances `journal_applied`, inside the caller's transaction.
    static func apply(_ batch: Batch, to connection: SQLiteConnection) throws(StorageError) -> [RecordOutcome] {
        var outcomes: [RecordOutcome] = []
        outcomes.reserveCapacity(batch.count)
        for record in batch { outcomes.append(try Ledger.insert(record.visit, into: connection)) }
        if let last = batch.last?.sequence {
            try connection.query(
                """
                INSERT INTO settings (name, value) VALUES ('journal_applied', ?)
                ON CONFLICT(name) DO UPDATE SET value = excluded.value
                """,
                [.text(String(last))]
            )
        }
        return outcomes
    }
}
