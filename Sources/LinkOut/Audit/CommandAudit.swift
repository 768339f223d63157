package import Domain
import Foundation
import Lifecycle
package import Storage

/// The command line's entries in the audit log: who ran the command (`cli:<user>@<host>`), on this machine.
package enum CommandAudit {
    package static func record(
        _ ledger: Ledger,
        action: String,
        subject: String?,
        before: String? = nil,
        after: String?
    ) throws {
        try ledger.audit.append(entry(action: action, subject: subject, before: before, after: after))
    }

    /// The entry `record` appends, for a ledger written without opening it as a `Ledger` (a restore).
    package static func entry(action: String, subject: String?, before: String? = nil, after: String?) -> AuditEntry {
        AuditEntry(
            at: Clock.system.nowMilliseconds(),
            actor: AuditTrail.commandLineActor,
            origin: "local",
            action: action,
            subject: subject,
            before: before,
            after: after
        )
    }

    /// The token's latest report, as the "before" of an action on it.
    package static func reportState(_ ledger: Ledger, _ externalPurchaseId: ExternalPurchaseID) throws -> String? {
        try ledger.reports.reports(for: externalPurchaseId).first.map { "\($0.status.rawValue) \($0.state.rawValue)" }
    }
}
