import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The journal file: the only place that calls open/write/fdatasync/ftruncate for it. Appends only.
final class JournalFile: Sendable {
    private let fd: Int32
    private let bytesWritten: Atomic<Int>
    let path: String

    init(path: String) throws(StorageError) {
        self.path = path
        fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StorageError.system(errno, "cannot open \(path)")
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
            throw StorageError(.inUse, "another linkout process is using \(path)", systemError: errno)
        }
    }

    /// Gives the lock back (the ledger closed; another opener may take over).
    func unlock() {
        flock(fd, LOCK_UN)
    }

    /// The whole file (at open, for replay).
    func readAll() throws(StorageError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw StorageError(.journal, "cannot read \(path)")
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
                throw StorageError.system(errno, "journal write failed")
            }
            offset += written
        }
        bytesWritten.add(bytes.count, ordering: .relaxed)
    }

    func sync() throws(StorageError) {
        guard fdatasync(fd) == 0 else {
            throw StorageError.system(errno, "journal fdatasync failed")
        }
    }

    func truncate() throws(StorageError) {
        guard ftruncate(fd, 0) == 0 else {
            throw StorageError.system(errno, "journal truncate failed")
        }
        bytesWritten.store(0, ordering: .relaxed)
        try sync()
    }
}
