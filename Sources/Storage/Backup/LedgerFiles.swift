import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// File operations on a SQLite ledger as a whole: the database file and the `-wal`, `-shm` and `-journal` files
/// SQLite keeps beside it.
enum LedgerFiles {
    /// The files SQLite may keep beside a database.
    static let companionSuffixes = ["-wal", "-shm", "-journal"]

    /// Whether two paths name one file (however spelled: relative, through `..` or a symlink). False when either is
    /// missing.
    static func areOneFile(_ first: String, _ second: String) -> Bool {
        var a = stat()
        var b = stat()
        guard stat(first, &a) == 0, stat(second, &b) == 0 else { return false }
        return a.st_dev == b.st_dev && a.st_ino == b.st_ino
    }

    /// Whether `path` is a regular file (through a symlink): a ledger or a backup is one. Opening a FIFO would wait
    /// for a writer that never comes, and a folder or a device is no database.
    static func isRegularFile(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
    }

    /// Refuses a ledger file a command cannot use: `noLedger` only when nothing is there (or it is no file), so a
    /// ledger in a folder this user cannot enter (a data folder is 0700, its owner's) is named as the permission
    /// it lacks, not as missing: an operator told "no ledger" goes looking for a typo while the data is all there.
    static func requireLedgerFile(_ path: String) throws(StorageError) {
        var status = stat()
        guard stat(path, &status) == 0 else {
            let number = errno
            guard number == ENOENT || number == ENOTDIR else {
                // What to do about a denial is the caller's to say (the command line names the folder's owner).
                throw StorageError(
                    .dataFolder,
                    "cannot reach the ledger \(path): \(String(cString: strerror(number)))",
                    systemError: number
                )
            }
            throw Ledger.noLedger(at: path)
        }
        guard status.st_mode & S_IFMT == S_IFREG else { throw Ledger.noLedger(at: path) }
    }

    /// Whether anything is at `path`, a symlink to nothing included: a new file must not replace it.
    static func isTaken(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    /// Creates `path` empty, readable by its owner only (an empty file is an empty SQLite database): a ledger
    /// holds the installation's secret and people's data, and SQLite gives its `-wal` and `-shm` the mode of the
    /// database file. A file already there is left as it is, unless it is empty: the ledger is made in it then,
    /// and is as private as one made anew (an empty file someone made with `touch` kept its 0644, and the WAL
    /// took it too).
    static func createPrivately(_ path: String) throws(StorageError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 || errno == EEXIST else {
            throw StorageError(.dataFolder, "cannot create \(path)", systemError: errno)
        }
        if fd >= 0 {
            close(fd)
            return
        }
        var status = stat()
        if lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_size == 0,
            status.st_mode & 0o077 != 0
        {
            chmod(path, 0o600)
        }
    }

    /// Creates the data folder `directory` when missing, readable by its owner only (and so are the parents it
    /// creates): what the process's umask allows (0777 under `umask 000`) is not what a folder of people's data
    /// should be. A folder already there is left as it is.
    static func createFolder(_ directory: String) throws(StorageError) {
        var status = stat()
        if stat(directory, &status) == 0 {
            guard status.st_mode & S_IFMT == S_IFDIR else {
                throw StorageError(.dataFolder, "the data folder \(directory) is a file, not a folder")
            }
            return
        }
        try createPrivately(folder: directory, named: "data folder \(directory)")
    }

    /// Makes `path` (and the folders above it) readable by the owner only, as the ledger it holds or sets aside:
    /// the installation's secret and people's data. `named` says what it is in the error.
    /// Made a level at a time with `mkdir`, so a failure names the level and the system's reason ("Not a
    /// directory" for a folder under a file), where Foundation said "NSCocoaErrorDomain error 512".
    static func createPrivately(folder path: String, named: String) throws(StorageError) {
        var made = path.hasPrefix("/") ? "" : "."
        for level in path.split(separator: "/") {
            made += "/" + level
            guard mkdir(made, 0o700) == 0 || errno == EEXIST else {
                let error = errno
                throw StorageError(
                    .dataFolder,
                    "cannot create \(named): \(made): \(String(cString: strerror(error)))",
                    systemError: error
                )
            }
        }
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            throw StorageError(.dataFolder, "cannot create \(named): \(path) is a file, not a folder")
        }
    }

    /// A new, empty, private database file at `path` in place of whatever an interrupted run left there.
    static func createAnew(_ path: String) throws(StorageError) {
        remove(path)
        try createPrivately(path)
    }

    /// Removes the database at `path` and what SQLite keeps beside it; missing files are no error.
    static func remove(_ path: String) {
        for file in [path] + companionSuffixes.map({ path + $0 }) { unlink(file) }
    }

    /// A second name for `source` at `destination` (one file system): the file lives on under it when `source`
    /// is replaced.
    static func link(_ source: String, to destination: String) throws(StorageError) {
        guard Glibc.link(source, destination) == 0 else {
            throw StorageError(.dataFolder, "cannot link \(source) to \(destination)", systemError: errno)
        }
    }
}
