import Foundation
import Lifecycle
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One journal file: the only place that writes, syncs or cuts it (`JournalSpare` names and removes the spare it
/// made with `writeZeros`). Appends only, each at the end of what it holds: the file's size, or for a segment
/// written full of zeros ahead of need (`JournalSpare`), its start.
final class JournalFile: Sendable {
    private let fd: Int32
    private let bytesWritten: Atomic<Int>
    let path: String

    /// `end`: where the records it holds end; nil for the file's size.
    init(path: String, recordsEndAt end: Int? = nil) throws(StorageError) {
        self.path = path
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StorageError.system(errno, "cannot open \(path)")
        }
        var info = stat()
        fstat(fd, &info)
        bytesWritten = Atomic(end ?? Int(info.st_size))
    }

    deinit { close(fd) }

    var size: Int { bytesWritten.load(ordering: .relaxed) }

    /// Takes the file's exclusive advisory lock for this process's lifetime, or fails if another holds it.
    func lockExclusively() throws(StorageError) {
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { throw Self.inUse(path) }
    }

    /// The lock file at `path` is held: named by its process where the kernel says which (EWOULDBLOCK's own
    /// words, "Resource temporarily unavailable", told the operator nothing), with what to do.
    static func inUse(_ path: String) -> StorageError {
        // Pid 0: a holder in another pid namespace (a container on the same volume), which has no pid here.
        let holder = lockHolder(path).flatMap { $0 > 0 ? " (process \($0))" : nil } ?? ""
        let folder = (path as NSString).deletingLastPathComponent
        return StorageError(
            .inUse,
            "another linkout process\(holder) is using the data folder \(folder)",
            remedy: "stop that process first; one server or command that writes uses a data folder at a time"
        )
    }

    /// The process that holds the exclusive lock of the file at `path` (a server on its data folder), read from
    /// the kernel's list of locks (`/proc/locks`) without taking it: taking it, even for a moment, could refuse a
    /// server that starts just then. Nil when none does.
    static func lockHolder(_ path: String) -> Int32? {
        var info = stat()
        guard stat(path, &info) == 0, let locks = ProcFile.read("/proc/locks") else { return nil }
        // `1: FLOCK  ADVISORY  WRITE 4321 fd:01:1234567 0 EOF`: the holder's pid, then device (major:minor) and
        // inode. The device's numbers are macros Swift does not import, so a line is matched by the inode, and its
        // process confirmed by a descriptor of the same file (device and inode), when this user can read them: a
        // file of the same number on another filesystem is no lock of this one.
        let inode = ":" + String(info.st_ino)
        for line in locks.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.count > 5 && fields[1] == "FLOCK" && fields[5].hasSuffix(inode), let pid = Int32(fields[4]),
                opens(pid, device: info.st_dev, inode: info.st_ino) != false
            {
                return pid
            }
        }
        return nil
    }

    /// Whether process `pid` has the file open; nil when its descriptors cannot be read (another user's).
    private static func opens(_ pid: Int32, device: dev_t, inode: ino_t) -> Bool? {
        let folder = "/proc/\(pid)/fd"
        guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return nil }
        return descriptors.contains { descriptor in
            var info = stat()
            return stat(folder + "/" + descriptor, &info) == 0 && info.st_dev == device && info.st_ino == inode
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

    /// Appends `bytes`; throws `.diskFull` on `ENOSPC`. A failure may leave part of them behind (see
    /// `truncate(to:)`). Only the journal's thread appends, so the end read here is the end written to.
    func append(_ bytes: [UInt8]) throws(StorageError) {
        let end = bytesWritten.load(ordering: .relaxed)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return pwrite(fd, base + offset, raw.count - offset, off_t(end + offset))
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

    /// Cuts the file to `length` bytes (0 empties it).
    func truncate(to length: Int = 0) throws(StorageError) {
        guard ftruncate(fd, off_t(length)) == 0 else {
            throw StorageError.system(errno, "journal truncate failed")
        }
        bytesWritten.store(length, ordering: .relaxed)
    }

    /// Writes a file of `bytes` zeros at `path` and makes it durable, so the filesystem holds its blocks before
    /// any record goes there; false (and no file) when it cannot, a full disk among other reasons. A page per
    /// write: after larger writes the kernel caches the file in larger units (folios), and a sync after a small
    /// record then writes back the whole unit (measured: 1 MB a sync after writes of 1 MB, 5.8 KB after 4 KB).
    static func writeZeros(_ path: String, bytes: Int) -> Bool {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        let chunk = [UInt8](repeating: 0, count: Int(getpagesize()))
        var offset = 0
        while offset < bytes {
            let count = min(chunk.count, bytes - offset)
            let written = chunk.withUnsafeBytes { pwrite(fd, $0.baseAddress, count, off_t(offset)) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { break }
            offset += written
        }
        let done = offset == bytes && fdatasync(fd) == 0
        close(fd)
        if !done { unlink(path) }
        return done
    }

    /// Deletes the file (its records are all applied); the descriptor closes with this object.
    func remove() {
        unlink(path)
    }

    /// The bytes free for an unprivileged writer on the filesystem of `directory` (nil when it cannot be read).
    static func freeBytes(in directory: String) -> Int? {
        var figures = statvfs()
        guard statvfs(directory, &figures) == 0 else { return nil }
        let (free, overflow) = Int(clamping: figures.f_bavail).multipliedReportingOverflow(
            by: Int(clamping: figures.f_frsize)
        )
        return overflow ? Int.max : free
    }

    /// Whether the filesystem of `directory` has `bytes` free for this process: a file of that size is allocated
    /// there and removed (free-space figures leave out quotas and reserved blocks; an allocation does not).
    static func hasRoom(in directory: String, bytes: Int) -> Bool {
        let path = (directory as NSString).appendingPathComponent("room-probe.\(getpid())")
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        defer {
            close(fd)
            unlink(path)
        }
        return posix_fallocate(fd, 0, off_t(bytes)) == 0
    }

    /// Makes the directory entries in `directory` durable (a new segment must not vanish in a power loss).
    static func syncDirectory(_ directory: String) throws(StorageError) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw StorageError.system(errno, "cannot open \(directory)") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw StorageError.system(errno, "fsync of \(directory) failed") }
    }
}
