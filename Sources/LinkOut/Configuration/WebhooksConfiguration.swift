extension Configuration {
    /// `webhooks`: where the developer's backend hears of purchases (entitlement webhooks).
    package struct Webhooks: Sendable {
        /// The receiver, e.g. `https://api.example.com/linkout`. Empty: no webhooks are sent.
        package var url = ""
        /// The HMAC-SHA256 key of the signatures (`LINKOUT_WEBHOOK_SECRET`, or `secretFile`). Never logged.
        package var secret = ""
        /// Total time for one delivery attempt, in seconds.
        package var timeoutSeconds: Int64 = 10
        /// How long a failing delivery is retried before it is given up (and shown as failed). Default 3 days.
        package var retryForSeconds: Int64 = 3 * 86_400

        package init() {}

        package var isEnabled: Bool { !url.isEmpty }

        static func read(_ section: JSONFields, unreadSecretFiles: inout [ConfigurationError])
            throws(ConfigurationError) -> Webhooks
        {
            try section.rejectUnknownKeys(["url", "secret", "secretFile", "timeoutSeconds", "retryForSeconds"])
            var webhooks = Webhooks()
            webhooks.url = try section.string("url", default: webhooks.url)
            if !webhooks.url.isEmpty {
                try Configuration.requireHTTPURL(webhooks.url, field: "webhooks.url", called: true)
            }
            webhooks.secret = try section.string("secret", default: webhooks.secret)
            if let file = try section.optionalString("secretFile"), !file.isEmpty {
                guard webhooks.secret.isEmpty else {
                    throw ConfigurationError.bothSet("webhooks.secretFile", besides: "webhooks.secret")
                }
                webhooks.secret =
                    Configuration.secret(fromFile: file, field: "webhooks.secretFile", unreadFiles: &unreadSecretFiles)
                    ?? ""
            }
            webhooks.timeoutSeconds = try section.integer(
                "timeoutSeconds",
                default: webhooks.timeoutSeconds,
                range: 1...120
            )
            webhooks.retryForSeconds = try section.integer(
                "retryForSeconds",
                default: webhooks.retryForSeconds,
                range: 60...(30 * 86_400)
            )
            return webhooks
        }

        /// A receiver needs a secret to check that events come from us.
        func validate() throws(ConfigurationError) {
            guard isEnabled, secret.isEmpty else { return }
            throw ConfigurationError(
                field: "webhooks.secret",
                problem: "is required with webhooks.url (or LINKOUT_WEBHOOK_SECRET, or secretFile)"
            )
        }
    }

    /// `redemption`: the single-use codes that bring a purchase into the app.
    package struct Redemption: Sendable {
        /// How long a code can be redeemed after the purchase. Default 24 hours.
        package var codeLifetimeSeconds: Int64 = 86_400

        package init() {}

        static func read(_ section: JSONFields) throws(ConfigurationError) -> Redemption {
            try section.rejectUnknownKeys(["codeLifetimeSeconds"])
            var redemption = Redemption()
            redemption.codeLifetimeSeconds = try section.integer(
                "codeLifetimeSeconds",
                default: redemption.codeLifetimeSeconds,
                range: 60...(90 * 86_400)
            )
            return redemption
        }
    }
}
