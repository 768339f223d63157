import Foundation

/// Whether a folder is on a file system mounted read-only (a snapshot, a read-only bind mount). SQLite reports
/// what failed last there: the ledger opens, then its WAL's `-shm`, which it cannot create, is looked for read-only
/// and is missing, so the reason it gives is "No such file or directory" for a ledger that is there.
enum ReadOnlyFileSystem {
    static func holds(_ path: String) -> Bool {
        // A database of no file (in memory, a temporary one) is on no folder of ours.
        guard !path.isEmpty, path != SQLiteConnection.inMemory else { return false }
        var figures = statvfs()
        let folder = (path as NSString).deletingLastPathComponent
        guard statvfs(folder.isEmpty ? "." : folder, &figures) == 0 else { return false }
        return figures.f_flag & UInt(ST_RDONLY) != 0
    }

    /// The system error to report for a file at `path` SQLite could not open: `EROFS` in place of a missing
    /// `-shm`'s `ENOENT` when the folder is read-only.
    static func reason(_ system: Int32, openingBeside path: String) -> Int32 {
        system == ENOENT && holds(path) ? EROFS : system
    }
}
