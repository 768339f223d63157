import CSQLite
import Synchronization

/// A ledger file SQLite finds damaged (`SQLITE_CORRUPT`, "database disk image is malformed", or `SQLITE_NOTADB`):
/// pages overwritten by a failing disk, a copy taken mid-write. The server can start on such a file and go on
/// recording visits (its journal holds them), while reads of the damaged pages fail; so the first time one of the
/// database's connections meets the damage it is noted here, for `/readyz`, `/metrics` and the dashboard to say
/// until the file is replaced. `linkout check` and `linkout backup` look for damage themselves (`quickCheck`).
final class LedgerDamage: Sendable {
    private let first = Mutex<String?>(nil)

    /// SQLite's words when a connection first met the damage, or nil.
    var noted: String? { first.withLock { $0 } }

    /// Notes damage a connection met (the first words about it are kept).
    func note(_ message: String) {
        first.withLock { first in
            if first == nil { first = message }
        }
    }

    /// Whether a SQLite result code says the file is damaged.
    static func isDamage(_ rc: Int32) -> Bool {
        rc & 0xff == SQLITE_CORRUPT || rc & 0xff == SQLITE_NOTADB
    }

    /// SQLite's `PRAGMA quick_check` of the file `connection` has open (every page read, each b-tree's shape
    /// checked; not whether indexes match their tables): its first three findings, nil when the file is whole.
    /// A check that fails for another reason than damage (busy, out of memory) is thrown: it says nothing of it.
    static func quickCheck(_ connection: SQLiteConnection) throws(StorageError) -> String? {
        let findings: [String]
        do {
            findings = try connection.query("PRAGMA quick_check").compactMap { $0.first?.text }
        } catch  where error.sqliteCode.map(isDamage) == true {
            // A file too damaged to check at all is damaged.
            return error.message
        }
        return findings == ["ok"] ? nil : findings.prefix(3).joined(separator: "; ")
    }
}
