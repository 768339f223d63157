import Crypto
import Foundation
import HTTPServer
import Lifecycle
import Logging
import Storage

#if canImport(Glibc)
import Glibc
#endif

/// Appends to the ledger's audit log who did what: the admin API's writes, the dashboard's sign-ins (and failed
/// ones), the command line's actions, and changes the server notices at start. A credential is named by a
/// fingerprint (`AuditFingerprint`), never by itself. A failed append never undoes the action
/// it records: it is logged as an error, loudly, since the trail then has a gap.
struct AuditTrail: Sendable {
    let ledger: Ledger
    let clock: Clock
    let logger: Logger
    let trustedProxies: Set<String>
    /// `admin:<fingerprint>` of `LINKOUT_ADMIN_TOKEN`.
    let adminActor: String

    let fingerprint: AuditFingerprint

    init(
        ledger: Ledger,
        clock: Clock,
        logger: Logger,
        trustedProxies: Set<String>,
        adminToken: String?,
        fingerprint: AuditFingerprint
    ) {
        self.ledger = ledger
        self.clock = clock
        self.logger = logger
        self.trustedProxies = trustedProxies
        self.fingerprint = fingerprint
        adminActor = "admin:" + (adminToken.map(fingerprint.callAsFunction) ?? "none")
    }

    /// `cli:<user>@<host>`: who ran a command on the server's machine. The user is the account the process runs
    /// as (its real user id's name), not `$USER`, which whoever runs the command sets as they like; a name or host
    /// with anything but printable ASCII is shown escaped, so one entry cannot print as two.
    static var commandLineActor: String {
        let uid = getuid()
        let name = getpwuid(uid).flatMap { $0.pointee.pw_name.map { String(cString: $0) } } ?? "uid \(uid)"
        return "cli:\(printable(name))@\(printable(ProcessInfo.processInfo.hostName))"
    }

    /// `text` with every byte outside printable ASCII as `\xNN`.
    static func printable(_ text: String) -> String {
        text.utf8.map { (0x20..<0x7F).contains($0) ? String(UnicodeScalar($0)) : "\\x" + String(format: "%02X", $0) }
            .joined()
    }

    func append(_ entry: AuditEntry) {
        do {
            try ledger.audit.append(entry)
        } catch {
            logger.error("audit entry not written", ["action": entry.action, "error": "\(error)"])
        }
    }

    /// An entry for an HTTP request by the admin token's holder (or, `actor`, by whoever presented another).
    func record(
        _ request: HTTPRequest,
        actor: String? = nil,
        action: String,
        subject: String?,
        before: String? = nil,
        after: String?
    ) {
        append(
            AuditEntry(
                at: clock.nowMilliseconds(),
                actor: actor ?? adminActor,
                origin: ClientAddress.resolve(request, trustedProxies: trustedProxies),
                action: action,
                subject: subject,
                before: before,
                after: after
            )
        )
    }

    /// An admin API write, recorded once it succeeded (2xx): `subject` from the path, `before` read before the
    /// handler runs, `after` from its answer.
    func audited(
        _ action: String,
        subject: @escaping @Sendable (HTTPRequest) -> String?,
        before: (@Sendable (HTTPRequest) throws -> String?)? = nil,
        after: @escaping @Sendable (HTTPResponse) -> String? = AuditTrail.detail,
        _ handler: @escaping Router.Handler
    ) -> Router.Handler {
        { request in
            let prior = try before?(request)
            let response = try handler(request)
            if (200..<300).contains(response.status.code) {
                record(request, action: action, subject: subject(request), before: prior, after: after(response))
            }
            return response
        }
    }

    /// The `detail`, `state` or `status` of a JSON answer, whichever it has: what the action came to, never a
    /// secret the answer may carry (a reissued credential's).
    @Sendable static func detail(_ response: HTTPResponse) -> String? {
        guard let object = object(response) else { return nil }
        for key in ["detail", "state", "status"] { if let text = object[key] as? String { return text } }
        return nil
    }

    /// A JSON answer's top-level object, for the summaries above and the routes' own.
    static func object(_ response: HTTPResponse) -> [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
    }
}
