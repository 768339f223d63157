import Foundation
import Lifecycle
import Storage

/// What the audit log keeps of a credential or a key before an action on it ("the state before and after", README
/// "Audit trail"), the same from the CLI and the admin API. A repeated action is recorded as what it was: a revoke of
/// a revoked credential says so in its before.
extension AppAccessAdministration {
    /// "active", "revoked <time>" or "replaced by <id>"; nil for an unknown id.
    package func credentialState(_ id: String) throws -> String? {
        guard let credential = try ledger.credentials.credential(id: id) else { return nil }
        if let replacement = credential.replacedBy { return "replaced by \(replacement)" }
        return credential.revokedAt.map { "revoked \(Self.time($0))" } ?? "active"
    }

    /// Before a rotation: the key that signs now ("signing with <kid>"), or that none does.
    package func signingState() throws -> String {
        let now = clock.nowMilliseconds()
        let signing = try keys().filter { $0.retiredAt == nil && $0.signsFrom <= now }.max {
            $0.signsFrom < $1.signsFrom
        }
        return signing.map { "signing with \($0.kid)" } ?? "no key signing"
    }

    /// Before a retirement: "published" or "retired <time>"; nil for an unknown key.
    package func keyState(_ kid: String) throws -> String? {
        guard let key = try keys().first(where: { $0.kid == kid }) else { return nil }
        return key.retiredAt.map { "retired \(Self.time($0))" } ?? "published"
    }

    static func time(_ milliseconds: Int64) -> String {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000).formatted(.iso8601)
    }
}
