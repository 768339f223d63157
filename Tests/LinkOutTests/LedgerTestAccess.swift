import Foundation

@testable import Storage

/// The audit log of a data folder, read directly.
enum LedgerTestAccess {
    static func auditSubjects(_ dataDir: String, action: String) throws -> [String] {
        let ledger = try Ledger(directory: dataDir)
        defer { ledger.close() }
        return try ledger.audit.entries().filter { $0.action == action }.compactMap(\.subject)
    }
}
