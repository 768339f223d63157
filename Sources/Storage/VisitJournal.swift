import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The landing path's durable write: an append-only file where each batch of visits is one `write(2)` and one
/// `fdatasync(2)`. A visit is acknowledged once its batch is on disk; the ledger's ingester then folds it into
/// SQLite in large transactions, and replays whatever it had not folded in when the process died.
///
/// Why: a SQLite commit rewrites every b-tree page a batch touches (random keys touch many), so small frequent
/// commits cost far more than one sequential append of the same visits.
final class VisitJournal: Sendable {
    typealias Completion = @Sendable (StorageError?) -> Void

    private struct Pending {
        var record: [UInt8]
        var sequence: Int64
        var visit: Visit
        var completion: Completion
    }

    private struct State {
        var pending: [Pending] = []
        var nextSequence: Int64
        var stopping = false
        /// Highest sequence written, and highest the ingester has committed to SQLite.
        var written: Int64
        var applied: Int64
    }

    /// When every record is in SQLite and the file is bigger than this, it is truncated to zero.
    static let truncateAbove = 16 << 20

    private let file: JournalFile
    private let durable: Bool
    private let state: Mutex<State>
    private let available = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)
    private let onDurable: @Sendable ([(sequence: Int64, visit: Visit)]) -> Void

    /// `onDurable` receives each batch once it is on disk (the ingester's queue).
    init(
        file: JournalFile,
        nextSequence: Int64,
        durable: Bool,
        onDurable: @escaping @Sendable ([(sequence: Int64, visit: Visit)]) -> Void
    ) {
        self.file = file
        self.durable = durable
        self.onDurable = onDurable
        state = Mutex(State(nextSequence: nextSequence, written: nextSequence - 1, applied: nextSequence - 1))
        let thread = Thread { [self] in
            run()
            stopped.signal()
        }
        thread.name = "linkout-journal"
        thread.start()
    }

    /// Queues a visit; `completion` runs once it is on disk (or with the error that kept it off).
    func append(_ visit: Visit, completion: @escaping Completion) {
        let accepted = state.withLock { state -> Bool in
            guard !state.stopping else { return false }
            let sequence = state.nextSequence
            state.nextSequence += 1
            state.pending.append(
                Pending(
                    record: JournalCoding.encode(visit, sequence: sequence),
                    sequence: sequence,
                    visit: visit,
                    completion: completion
                )
            )
            return true
        }
        guard accepted else {
            completion(StorageError(code: -1, message: "the ledger is closed"))
            return
        }
        available.signal()
    }

    /// The sequence of the last visit appended (written or about to be).
    var lastAssigned: Int64 { state.withLock { $0.nextSequence - 1 } }

    /// The ingester committed everything up to `sequence` to SQLite.
    func markApplied(_ sequence: Int64) {
        state.withLock { $0.applied = max($0.applied, sequence) }
    }

    /// Writes what is queued, then stops.
    func stop() {
        let first = state.withLock { state in
            defer { state.stopping = true }
            return !state.stopping
        }
        guard first else { return }
        available.signal()
        stopped.wait()
        file.unlock()
    }

    private func run() {
        while true {
            available.wait()
            let (batch, stopping) = state.withLock { state in
                defer { state.pending.removeAll(keepingCapacity: true) }
                return (state.pending, state.stopping)
            }
            if !batch.isEmpty { write(batch) }
            truncateIfAllApplied()
            if stopping && state.withLock({ $0.pending.isEmpty }) { return }
        }
    }

    private func write(_ batch: [Pending]) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(batch.reduce(0) { $0 + $1.record.count })
        for pending in batch { bytes.append(contentsOf: pending.record) }
        var failure: StorageError?
        do throws(StorageError) {
            try file.append(bytes)
            if durable { try file.sync() }
        } catch {
            failure = error
        }
        if failure == nil {
            state.withLock { $0.written = batch.last?.sequence ?? $0.written }
            onDurable(batch.map { ($0.sequence, $0.visit) })
        }
        for pending in batch { pending.completion(failure) }
    }

    private func truncateIfAllApplied() {
        let caughtUp = state.withLock { $0.applied >= $0.written }
        guard caughtUp, file.size > Self.truncateAbove else { return }
        try? file.truncate()
    }
}

/// The journal file: the only place that calls open/write/fdatasync/ftruncate for it. Appends only.
final class JournalFile: Sendable {
    private let fd: Int32
    private let bytesWritten: Atomic<Int>
    let path: String

    init(path: String) throws(StorageError) {
        self.path = path
        fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StorageError(code: errno, message: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        var info = stat()
        fstat(fd, &info)
        bytesWritten = Atomic(Int(info.st_size))
    }

    deinit { close(fd) }

    var size: Int { bytesWritten.load(ordering: .relaxed) }

    /// Takes the file's exclusive advisory lock for this process's lifetime, or fails if another holds it.
    func lockExclusively() throws(StorageError) {
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            throw StorageError(code: errno, message: "another linkout process is using \(path)")
        }
    }

    /// Gives the lock back (the ledger closed; another opener may take over).
    func unlock() {
        flock(fd, LOCK_UN)
    }

    /// The whole file (at open, for replay).
    func readAll() throws(StorageError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw StorageError(code: -1, message: "cannot read \(path)")
        }
        return Array(data)
    }

    func append(_ bytes: [UInt8]) throws(StorageError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return Glibc.write(fd, base + offset, raw.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw StorageError(code: errno, message: "journal write failed: \(String(cString: strerror(errno)))")
            }
            offset += written
        }
        bytesWritten.add(bytes.count, ordering: .relaxed)
    }

    func sync() throws(StorageError) {
        guard fdatasync(fd) == 0 else {
            throw StorageError(code: errno, message: "journal fdatasync failed: \(String(cString: strerror(errno)))")
        }
    }

    func truncate() throws(StorageError) {
        guard ftruncate(fd, 0) == 0 else {
            throw StorageError(code: errno, message: "journal truncate failed: \(String(cString: strerror(errno)))")
        }
        bytesWritten.store(0, ordering: .relaxed)
        try sync()
    }
}
