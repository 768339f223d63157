import CSQLite

#if canImport(Glibc)
import Glibc
#endif

/// A storage failure: what kind it is (`code`), a message for logs, and the engine's or the system's own number
/// where there is one.
public struct StorageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, coarse enough for callers to act on (`diskFull` → 503 and `/readyz`).
    public enum Code: Sendable, Equatable {
        /// The data folder cannot be created or read.
        case dataFolder
        /// A command found no ledger where it was pointed (a mistyped folder, an empty database): commands work on
        /// the ledger a server made and never make one, so an erasure or a key rotation cannot land in a new, empty
        /// ledger and report success.
        case noLedger
        /// Another process holds the data folder (one server per folder).
        case inUse
        /// The disk (or a size limit) is full: the journal got `ENOSPC`/`EDQUOT`, or SQLite `SQLITE_FULL`.
        case diskFull
        /// Writes are refused: the ledger was opened as a reader, writes are suspended, or SQLite is read-only.
        case readOnly
        /// The ledger is closed.
        case closed
        /// A system call on the visit journal failed (the number is in `systemError`).
        case journal
        /// A row the operation depends on is missing.
        case notFound
        /// A uniqueness or integrity rule refused the write.
        case constraint
        /// The outbox refused the change: the token has an open report, or it is already reported.
        case conflict
        /// A column holds a value outside its closed set (an unknown `state`, `environment`, ...): written by a
        /// newer version, or by hand. Never read as a default.
        case unknownValue
        /// The ledger's schema is newer than this release knows: a later release migrated it. Running older code
        /// on it could misread or damage what the newer one wrote, so nothing opens it.
        case newerSchema
        /// The ledger's schema is older than this release's, and the one opening it does not upgrade ledgers (a
        /// command next to the release that runs it): upgrading would leave that release a ledger it refuses.
        case olderSchema
        /// The database server cannot be reached (PostgreSQL down, restarting or unreachable): retry later.
        case unavailable
        /// Any other SQLite failure; the primary result code.
        case sqlite(Int32)
        /// Any other PostgreSQL failure; its SQLSTATE.
        case postgres(String)
    }

    public let code: Code
    public let message: String
    /// SQLite's (extended) result code, when SQLite reported the failure.
    public let sqliteCode: Int32?
    /// `errno`, when a system call failed.
    public let systemError: Int32?
    /// What ends the failure, where the caller's usual advice would point elsewhere: a full disk is the data
    /// folder's, except under a backup's file.
    public let remedy: String?

    init(_ code: Code, _ message: String, sqliteCode: Int32? = nil, systemError: Int32? = nil, remedy: String? = nil) {
        self.code = code
        self.message = message
        self.sqliteCode = sqliteCode
        self.systemError = systemError
        self.remedy = remedy
    }

    /// The message with the system's reason when a system call failed and the message does not say it
    /// ("Permission denied", "Read-only file system").
    public var messageWithReason: String {
        guard let systemError else { return message }
        let reason = String(cString: strerror(systemError))
        return message.contains(reason) ? message : "\(message): \(reason)"
    }

    /// Whether the failure is this user's lack of permission (a folder or file of the user the server runs as).
    public var isPermissionDenied: Bool { systemError == EACCES || systemError == EPERM }

    /// Whether PostgreSQL rolled the transaction back to let another go on: a deadlock (40P01) or a serialization
    /// failure (40001). Nothing of it was committed, so running it again is safe, and usually succeeds: the other
    /// writer has gone on.
    public var isLostToAnotherWriter: Bool {
        if case .postgres(let state) = code { return state == "40P01" || state == "40001" }
        return false
    }

    public var description: String {
        var text = "StorageError(\(code)"
        if let sqliteCode { text += ", sqlite \(sqliteCode)" }
        if let systemError { text += ", errno \(systemError)" }
        return text + "): " + message
    }

    /// A SQLite result code as an error; the extended code is kept, the primary one picks the kind. `systemError`
    /// is the system call's own reason where SQLite's words are only "unable to open database file".
    static func sqlite(_ rc: Int32, _ message: String, systemError: Int32? = nil) -> StorageError {
        let code: Code =
            switch rc & 0xff {
            case SQLITE_FULL: .diskFull
            // A write the system refused for want of space: SQLite says only "disk I/O error".
            case SQLITE_IOERR where systemError == ENOSPC || systemError == EDQUOT: .diskFull
            case SQLITE_READONLY: .readOnly
            case SQLITE_CONSTRAINT: .constraint
            default: .sqlite(rc & 0xff)
            }
        return StorageError(code, message, sqliteCode: rc, systemError: systemError)
    }

    /// A PostgreSQL error by its SQLSTATE (class 23: integrity, 25006: read-only transaction, 53100: disk full,
    /// 08 and 57P: the connection or the server went away).
    static func postgres(_ state: String, _ message: String) -> StorageError {
        let code: Code =
            switch state {
            case "25006": .readOnly
            case "53100": .diskFull
            case _ where state.hasPrefix("23"): .constraint
            case _ where state.hasPrefix("08") || state.hasPrefix("57P"): .unavailable
            default: .postgres(state)
            }
        return StorageError(code, message)
    }

    /// A failed system call on the journal; `ENOSPC`/`EDQUOT` become `diskFull`.
    static func system(_ number: Int32, _ what: String) -> StorageError {
        let code: Code = number == ENOSPC || number == EDQUOT ? .diskFull : .journal
        return StorageError(code, "\(what): \(String(cString: strerror(number)))", systemError: number)
    }
}
