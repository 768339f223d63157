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
        if let password = environment["LINKOUT_DATABASE_PASSWORD"] {
            storage.postgresPassword = password
        }
        if let path = environment["LINKOUT_DATABASE_PASSWORD_FILE"] {
            storage.postgresPassword = try Self.secret(fromFile: path, field: "LINKOUT_DATABASE_PASSWORD_FILE")
        }
        if let level = environment["LINKOUT_LOG_LEVEL"] {
            logLevel = try Self.parseLevel(level, field: "LINKOUT_LOG_LEVEL")
        }
        if let mode = environment["LINKOUT_ACCESS_LOG"] {
            accessLog = try AccessLogMode.parse(mode, field: "LINKOUT_ACCESS_LOG")
        }
        if let token = environment["LINKOUT_ADMIN_TOKEN"] { adminToken = token }
        if let token = environment["LINKOUT_API_TOKEN"] { apiToken = token }
        // Secrets may come from files (Docker and Kubernetes secrets) instead of the environment itself.
        if let path = environment["LINKOUT_ADMIN_TOKEN_FILE"] {
            adminToken = try Self.secret(fromFile: path, field: "LINKOUT_ADMIN_TOKEN_FILE")
        }
        if let path = environment["LINKOUT_API_TOKEN_FILE"] {
            apiToken = try Self.secret(fromFile: path, field: "LINKOUT_API_TOKEN_FILE")
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
        try payments.apply(environment: environment)
        if let secret = environment["LINKOUT_WEBHOOK_SECRET"] { webhooks.secret = secret }
        if let path = environment["LINKOUT_WEBHOOK_SECRET_FILE"] {
            webhooks.secret = try Self.secret(fromFile: path, field: "LINKOUT_WEBHOOK_SECRET_FILE")
        }
        if let provider = environment["LINKOUT_PAYMENTS_PROVIDER"] {
            payments.provider = try Payments.provider(provider, field: "LINKOUT_PAYMENTS_PROVIDER")
        }
    }

    /// A secret from a file, without the trailing newline editors add; an empty or unreadable file is an error.
    static func secret(fromFile path: String, field: String) throws(ConfigurationError) -> String {
        let data = try ConfigurationFile.read(path, limit: ConfigurationFile.secretLimit, field: field)
        let secret = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !secret.isEmpty else { throw ConfigurationError(field: field, problem: "\(path) is empty") }
        return secret
    }
}
