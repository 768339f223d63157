import Dispatch
import Synchronization

/// Connections for reading, opened on demand and reused, so reads never wait for the writer or each other.
final class ReaderPool: Sendable {
    private let open: @Sendable () throws(StorageError) -> any SQLConnection
    /// Idle readers, or nil once drained: a reader given back after that is let go (its connection closes).
    private let idle = Mutex<[Reader]?>([])
    /// Bounds the connections (a database server has a connection limit for every instance together).
    private let slots: DispatchSemaphore?

    /// `open` makes a new reading connection (SQLite: read-only on the file; PostgreSQL: a session to the
    /// server); at most `limit` are open at once (nil: no limit), more readers wait for one to come back.
    init(limit: Int? = nil, open: @escaping @Sendable () throws(StorageError) -> any SQLConnection) {
        self.open = open
        slots = limit.map { DispatchSemaphore(value: max(1, $0)) }
    }

    /// Runs `body` on a connection borrowed from the pool (opened when none is idle).
    func read<T: Sendable>(_ body: (any SQLConnection) throws(StorageError) -> T) throws(StorageError) -> T {
        slots?.wait()
        defer { slots?.signal() }
        let reader: Reader
        if let borrowed = idle.withLock({ $0?.popLast() }) {
            reader = borrowed
        } else {
            reader = Reader(connection: try open())
        }
        defer { idle.withLock { $0?.append(reader) } }
        return try reader.connection.withLock { connection throws(StorageError) in try body(connection) }
    }

    /// Runs `body` in one read transaction, so its statements see one moment of the ledger: two counts of the same
    /// rows taken a moment apart under landings disagreed (the close said -202 tokens accepted).
    func readSnapshot<T: Sendable>(_ body: (any SQLConnection) throws(StorageError) -> T) throws(StorageError) -> T {
        try read { connection throws(StorageError) in
            try connection.beginSnapshot()
            do throws(StorageError) {
                let value = try body(connection)
                try connection.commit()
                return value
            } catch {
                if connection.isInTransaction { try? connection.rollback() }
                throw error
            }
        }
    }

    /// Closes the idle connections (a closing ledger; a reader still borrowed is closed when it is released).
    func drain() {
        idle.withLock { $0 = nil }
    }

    /// A reader connection; the pool hands each to one caller at a time, the Mutex makes that provable.
    private final class Reader: Sendable {
        let connection: Mutex<any SQLConnection>
        init(connection: sending any SQLConnection) { self.connection = Mutex(connection) }
    }
}
