import Foundation

/// Where the ledger's PostgreSQL database is and how long to wait for it. The password travels apart from the
/// URL (from the environment or a file), so the URL can be logged and shown; `redactedURL` drops a password
/// someone put in the URL anyway.
public struct PostgresTarget: Sendable {
    /// A libpq connection URI (`postgresql://user@host:5432/linkout`) or `key=value` string.
    public let url: String
    public let password: String?
    /// A statement that runs longer fails (and its transaction with it) instead of holding a request.
    public var statementTimeoutMilliseconds = 5_000
    /// How long connecting may take before the database counts as unavailable.
    public var connectTimeoutSeconds = 3
    /// Connections for reads beside the one writer; more readers wait for one to come back.
    public var readers = 8

    public init(url: String, password: String?) {
        self.url = url
        self.password = password
    }

    /// The URL without a password in it, for logs and `/readyz`: a URI's `user:password@` (also in libpq's
    /// multi-host form, which `URLComponents` does not parse) and a `password=` setting (in a query or a
    /// `key=value` string, quoted or not) are masked.
    public var redactedURL: String {
        var text = url
        if let scheme = text.range(of: "://") {
            let rest = text[scheme.upperBound...]
            let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
            let authority = rest[..<authorityEnd]
            if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
                text.replaceSubrange(authority.index(after: colon)..<at, with: "***")
            }
        }
        return text.replacingOccurrences(
            of: #"password\s*=\s*('(\\.|[^'\\])*'|[^&\s]*)"#,
            with: "password=***",
            options: [.regularExpression, .caseInsensitive]
        )
    }
}
