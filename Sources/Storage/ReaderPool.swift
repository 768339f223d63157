import Synchronization

/// Read-only SQLite connections, opened on demand and reused, so reads never wait for the writer or each other.
final class ReaderPool: Sendable {
    private let path: String
    private let idle = Mutex<[Reader]>([])

    init(path: String) {
        self.path = path
    }

    /// Runs `body` on a connection borrowed from the pool (opened when none is idle).
    func read<T: Sendable>(_ body: (SQLiteConnection) throws(StorageError) -> T) throws(StorageError) -> T {
        let reader: Reader
        if let borrowed = idle.withLock({ $0.popLast() }) {
            reader = borrowed
        } else {
            reader = Reader(connection: try SQLiteConnection(path: path, readOnly: true))
        }
        defer { idle.withLock { $0.append(reader) } }
        return try reader.connection.withLock { connection throws(StorageError) in try body(connection) }
    }

    /// A reader connection; the pool hands each to one caller at a time, the Mutex makes that provable.
    private final class Reader: Sendable {
        let connection: Mutex<SQLiteConnection>
        init(connection: sending SQLiteConnection) { self.connection = Mutex(connection) }
    }
}
