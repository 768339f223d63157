import Crypto
package import Storage

/// How the audit log names a secret or a person without holding either: the first 12 hex digits of an HMAC
/// under the installation's secret. The same token or address always gets the same fingerprint, so entries can
/// be matched; without the ledger's secret, an export cannot be used to test a guessed address or token.
package struct AuditFingerprint: Sendable {
    private let mac: HMACSHA256

    init(secret: String) {
        mac = HMACSHA256(key: Array(("audit-fingerprint\u{0}" + secret).utf8))
    }

    /// The fingerprint key of the installation whose ledger this is.
    package init(ledger: Ledger) throws {
        self.init(secret: try ledger.settings.secret(named: "identifiers"))
    }

    package func callAsFunction(_ text: String) -> String {
        Hex.encode(mac.authenticate(text).prefix(6))
    }
}
