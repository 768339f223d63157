import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The file a backup writes before it is published under its name (`<destination>.partial`), held by one run at
/// a time: an advisory lock on it lasts as long as the run (the process's descriptor), so a second backup to the
/// same name at the same moment is refused instead of deleting the first one's copy and publishing an empty one.
/// One a killed run left (nobody holds its lock) is removed and claimed anew.
///
/// The file is created under a name of this process's and locked before it takes the shared name (`link`, which
/// never replaces a file): created at the shared name, another run could find it there unlocked for a moment and
/// remove it as left over.
final class PartialBackupFile: Sendable {
    let path: String
    private let fd: Int32

    init(for destination: String) throws(StorageError) {
        path = destination + ".partial"
        let own = "\(path).\(getpid())"
        unlink(own)
        let fd = open(own, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StorageError(.dataFolder, "cannot create \(own)", systemError: errno) }
        defer { unlink(own) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw StorageError(.dataFolder, "cannot lock \(own)", systemError: errno)
        }
        // At most a few turns: each one either claims the name or removes a file no run holds.
        for _ in 0..<3 {
            if Self.link(own, path) == 0 {
                self.fd = fd
                return
            }
            guard errno == EEXIST else { break }
            guard Self.removeIfLeftOver(path) else {
                close(fd)
                throw StorageError(
                    .conflict,
                    "another backup to \(destination) is under way (\(path) is in use); run one backup to a name at a time"
                )
            }
        }
        let failure = errno
        close(fd)
        throw StorageError(.dataFolder, "cannot create \(path)", systemError: failure)
    }

    deinit { close(fd) }

    /// Removes the partial file at `path` and SQLite's files beside it when no run holds it; false when one does.
    /// Only the file locked here is removed: another run may have removed it meanwhile and put its own, held,
    /// under the name (the lock here was then taken on a file no longer there).
    private static func removeIfLeftOver(_ path: String) -> Bool {
        let existing = open(path, O_RDONLY | O_CLOEXEC)
        // Gone meanwhile: nothing to remove, the next turn links.
        guard existing >= 0 else { return true }
        defer { close(existing) }
        guard flock(existing, LOCK_EX | LOCK_NB) == 0 else { return false }
        var locked = stat()
        var named = stat()
        guard fstat(existing, &locked) == 0, stat(path, &named) == 0,
            locked.st_dev == named.st_dev && locked.st_ino == named.st_ino
        else { return true }
        LedgerFiles.remove(path)
        return true
    }

    /// Makes the finished file durable and gives it its name, `destination`, which must still be free: `link`
    /// never replaces a file (`rename` would put this copy over a backup another run published meanwhile).
    func publish(as destination: String) throws(StorageError) {
        guard fsync(fd) == 0 else { throw StorageError.system(errno, "fsync of \(path) failed") }
        guard Self.link(path, destination) == 0 else {
            let failure = errno
            throw failure == EEXIST
                ? StorageError(
                    .conflict,
                    "\(destination) appeared while the backup ran; a backup never overwrites a file"
                )
                : StorageError(.dataFolder, "cannot name the backup \(destination)", systemError: failure)
        }
        LedgerFiles.remove(path)
        try JournalFile.syncDirectory((destination as NSString).deletingLastPathComponent.nonEmptyPath)
    }

    /// A second name for `source`, never replacing a file at `destination`. On a filesystem without hard links
    /// (FAT, exFAT, some network mounts) the file is renamed when nothing is at `destination`: a rename in the
    /// moment between the check and it could replace one, which only a run started at that moment could make.
    private static func link(_ source: String, _ destination: String) -> Int32 {
        let linked = Glibc.link(source, destination)
        guard linked != 0, [EPERM, EOPNOTSUPP, ENOSYS].contains(errno) else { return linked }
        guard !LedgerFiles.isTaken(destination) else {
            errno = EEXIST
            return -1
        }
        return rename(source, destination)
    }

    /// Cuts the file to nothing and removes SQLite's files beside it.
    func empty() throws(StorageError) {
        guard ftruncate(fd, 0) == 0 else { throw StorageError.system(errno, "cannot empty \(path)") }
        for suffix in LedgerFiles.companionSuffixes { unlink(path + suffix) }
    }

    /// Removes the file (a failed run), with SQLite's files beside it.
    func discard() {
        LedgerFiles.remove(path)
    }
}
