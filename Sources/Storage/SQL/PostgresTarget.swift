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
        if let range = uriPasswordRange { text.replaceSubrange(range, with: "***") }
        return text.replacing(Self.passwordSetting) { _ in "password=***" }
    }

    /// `message` (libpq's own words may quote the URI, or the part of the password it could not read) with the URL
    /// shown as `redactedURL` and every password in it masked.
    public func redacting(_ message: String) -> String {
        var text = message.replacingOccurrences(of: url, with: redactedURL)
        // Shorter ones would mask letters of the message itself; nothing that short is a secret worth the name.
        for secret in secrets where secret.count >= 3 { text = text.replacingOccurrences(of: secret, with: "***") }
        return text
    }

    /// Why libpq cannot read `url` as written, when the reason is one it would quote a password in: a password
    /// holding an unencoded `/` (a generated one often does). libpq takes user information only from a `@` before
    /// the first `/`; finding none, it reads the password's first part as a port, and says so, password and all.
    /// Nil for anything else, which libpq judges itself. A `@` in the query (`?user=a@b`) is no user information,
    /// nor is one after a port (`host:5432/db@x`).
    public static func uriProblem(_ url: String) -> String? {
        guard let range = PostgresTarget(url: url, password: nil).uriPasswordRange,
            let slash = url[range].firstIndex(of: "/")
        else { return nil }
        let beforeSlash = url[range.lowerBound..<slash]
        if !beforeSlash.isEmpty, beforeSlash.allSatisfy({ ("0"..."9").contains($0) }) { return nil }
        return "the password in the URI holds '/': percent-encode it (%2F)"
    }

    /// A `password=` setting, quoted or not (in a query or a `key=value` string), any case; its value captured.
    private static var passwordSetting: Regex<(Substring, Substring)> {
        /(?i)password\s*=\s*('(?:\\.|[^'\\])*'|[^&\s]*)/
    }

    /// Where a URI's password is: between the first `:` of the user information and its last `@`. The user
    /// information is taken to end at the last `@` before the query, not at the first `/`: a generated password
    /// holds `/` (base64), and a `/` read as the path's start left it in the clear. A `@` in the database name
    /// would mask more than the password, never less.
    private var uriPasswordRange: Range<String.Index>? {
        guard let scheme = url.range(of: "://") else { return nil }
        let rest = url[scheme.upperBound...]
        let beforeQuery = rest[..<(rest.firstIndex(of: "?") ?? rest.endIndex)]
        guard let at = beforeQuery.lastIndex(of: "@"), let colon = rest[..<at].firstIndex(of: ":") else { return nil }
        return url.index(after: colon)..<at
    }

    /// Every password the URL and the setting hold, as written and percent-decoded.
    private var secrets: [String] {
        var found = [password].compactMap { $0 }
        if let range = uriPasswordRange {
            found.append(String(url[range]))
            // libpq quotes what it read before a `/`, `?` or `#` in it as another part of the URI.
            found += url[range].split(whereSeparator: { "/?#".contains($0) }).map(String.init)
        }
        let settings = url.matches(of: Self.passwordSetting).map { String($0.1) }
        for setting in settings {
            found.append(setting)
            if setting.hasPrefix("'"), setting.hasSuffix("'"), setting.count >= 2 {
                found.append(String(setting.dropFirst().dropLast()))
            }
        }
        found += found.compactMap { $0.removingPercentEncoding }
        return found.sorted { $0.count > $1.count }
    }
}
