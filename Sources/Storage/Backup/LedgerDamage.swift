import CSQLite
import Synchronization

/// A ledger file SQLite finds damaged (`SQLITE_CORRUPT`, "database disk image is malformed", or `SQLITE_NOTADB`):
/// pages overwritten by a failing disk, a copy taken mid-write. The server can start on such a file and go on
/// recording visits (its journal holds them), while reads of the damaged pages fail; so the first time any
/// connection meets the damage it is noted here, per file, for `/readyz`, `/metrics` and the dashboard to say until
/// the file is replaced. `linkout check` and `linkout backup` look for damage themselves (`quickCheck`).
package enum LedgerDamage {
    /// SQLite's first words about each damaged file met in this process, by the file's path.
    private static let noted = Mutex<[String: String]>([:])

    /// Whether a SQLite result code says the file is damaged.
    static func isDamage(_ rc: Int32) -> Bool {
        rc & 0xff == SQLITE_CORRUPT || rc & 0xff == SQLITE_NOTADB
    }

    /// Notes damage met in the file at `path` (the first words about it are kept).
    static func note(path: String, message: String) {
        noted.withLock { noted in
            if noted[path] == nil { noted[path] = message }
        }
    }

    /// What SQLite said when a connection first met damage in the file at `path`, or nil.
    package static func noted(path: String) -> String? {
        noted.withLock { $0[path] }
    }

    /// SQLite's `PRAGMA quick_check` of the file `connection` has open (every page read, each b-tree's shape
    /// checked; not whether indexes match their tables): its first three findings, nil when the file is whole.
    static func quickCheck(_ connection: SQLiteConnection) -> String? {
        let findings: [String]
        do {
            findings = try connection.query("PRAGMA quick_check").compactMap { $0.first?.text }
        } catch {
            // A file too damaged to check at all is damaged.
            return error.message
        }
        return findings == ["ok"] ? nil : findings.prefix(3).joined(separator: "; ")
    }
}
