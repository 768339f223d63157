import Foundation

extension Configuration {
    /// `LINKOUT_*` variables: they beat config.json. Secrets come only from here (or files named here), never
    /// from config.json.
    /// A variable set to the empty string is unset, for every one of them: a compose file's `${VAR}` with
    /// nothing behind it. (It stopped the server for some, and an empty `LINKOUT_DATABASE_URL` moved a
    /// PostgreSQL deployment to a new, empty SQLite ledger.)
    mutating func apply(environment all: [String: String]) throws(ConfigurationError) {
        let environment = all.filter { !$0.value.isEmpty }
        if let host = environment["LINKOUT_HOST"] { server.host = host }
        if let port = environment["LINKOUT_PORT"] { server.port = try Self.parsePort(port, field: "LINKOUT_PORT") }
        if let directory = environment["LINKOUT_DATA_DIR"] { storage.dataDir = directory }
        if let url = environment["LINKOUT_DATABASE_URL"] {
            storage.postgresURL = try Storage.postgresURL(url, field: "LINKOUT_DATABASE_URL")
        }
        if let password = try Self.secret("LINKOUT_DATABASE_PASSWORD", in: environment) {
            storage.postgresPassword = password
        }
        if let level = environment["LINKOUT_LOG_LEVEL"] {
            logLevel = try Self.parseLevel(level, field: "LINKOUT_LOG_LEVEL")
        }
        if let mode = environment["LINKOUT_ACCESS_LOG"] {
            accessLog = try AccessLogMode.parse(mode, field: "LINKOUT_ACCESS_LOG")
        }
        if let token = try Self.secret("LINKOUT_ADMIN_TOKEN", in: environment) {
            adminToken = try Self.bearerToken(token, field: "LINKOUT_ADMIN_TOKEN")
        }
        if let token = try Self.secret("LINKOUT_API_TOKEN", in: environment) {
            apiToken = try Self.bearerToken(token, field: "LINKOUT_API_TOKEN")
        }
        if let rate = environment["LINKOUT_RATE_LIMIT_PER_SECOND"] {
            guard let value = Int(rate), value >= 0 else {
                throw ConfigurationError(
                    field: "LINKOUT_RATE_LIMIT_PER_SECOND",
                    problem: "must be a whole number, 0 or more"
                )
            }
            server.rateLimitPerSecond = value
        }
        if let issuer = environment["LINKOUT_APPLE_ISSUER_ID"] { apple.issuerId = issuer }
        if let keyId = environment["LINKOUT_APPLE_KEY_ID"] { apple.keyId = keyId }
        if let file = environment["LINKOUT_APPLE_PRIVATE_KEY_FILE"] { apple.privateKeyFile = file }
        if let file = environment["LINKOUT_ENTITLEMENT_KEY_FILE"] {
            appEntitlements.signingKeyFile = file
        }
        try payments.apply(environment: environment, unreadSecretFiles: &unreadSecretFiles)
        if let secret = try Self.secret("LINKOUT_WEBHOOK_SECRET", in: environment, unreadFiles: &unreadSecretFiles) {
            webhooks.secret = secret
        }
        if let provider = environment["LINKOUT_PAYMENTS_PROVIDER"] {
            payments.provider = try Payments.provider(provider, field: "LINKOUT_PAYMENTS_PROVIDER")
        }
    }

    /// A secret from the variable `name`, or from the file its `_FILE` form names (Docker and Kubernetes
    /// secrets); nil when neither is set. Both set is an error: one of them was silently ignored, and a
    /// deployment that rotated the secret in one place went on with the other.
    static func secret(_ name: String, in environment: [String: String]) throws(ConfigurationError) -> String? {
        var unread: [ConfigurationError] = []
        let secret = try secret(name, in: environment, unreadFiles: &unread)
        if let problem = unread.first { throw problem }
        return secret
    }

    /// The same, a file that cannot be read added to `unreadFiles` (and nil) rather than thrown.
    static func secret(_ name: String, in environment: [String: String], unreadFiles: inout [ConfigurationError])
        throws(ConfigurationError) -> String?
    {
        let file = environment[name + "_FILE"]
        if let value = environment[name] {
            guard file == nil else { throw ConfigurationError.bothSet(name + "_FILE", besides: name) }
            return value
        }
        guard let file else { return nil }
        return secret(fromFile: file, field: name + "_FILE", unreadFiles: &unreadFiles)
    }

    /// `secret(fromFile:field:)`, a file that cannot be read added to `unreadFiles` (and nil) rather than thrown.
    static func secret(fromFile path: String, field: String, unreadFiles: inout [ConfigurationError]) -> String? {
        do {
            return try secret(fromFile: path, field: field)
        } catch {
            unreadFiles.append(error)
            return nil
        }
    }

    /// A token callers send in `Authorization: Bearer …`, which is one line of a request's head: one holding a
    /// line break or another control character (a file of two lines, a CRLF environment file's `\r`) was taken,
    /// and no request could ever carry it, so every call got 401.
    static func bearerToken(_ token: String, field: String) throws(ConfigurationError) -> String {
        let breaks: Set<Unicode.GeneralCategory> = [.control, .lineSeparator, .paragraphSeparator]
        guard !token.unicodeScalars.contains(where: { breaks.contains($0.properties.generalCategory) }) else {
            throw ConfigurationError(
                field: field,
                problem: "holds a line break or another control character, which no request can send: write the "
                    + "token on one line"
            )
        }
        return token
    }

    /// A secret from a file, without the trailing newline editors add; an empty or unreadable file is an error.
    static func secret(fromFile path: String, field: String) throws(ConfigurationError) -> String {
        let data = try ConfigurationFile.read(path, limit: ConfigurationFile.secretLimit, field: field)
        let secret = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !secret.isEmpty else { throw ConfigurationError(field: field, problem: "\(path) is empty") }
        return secret
    }
}
