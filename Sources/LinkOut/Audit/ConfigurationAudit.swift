import Crypto
import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Logging
import Payments
import Storage

/// What the server notices at start and records in the audit log when it changed since the last start: the
/// commission regimes, the exchange rates, the App Store Connect key (by id and public key fingerprint), where the
/// backend's webhooks go (and a fingerprint of their secret), the payment provider (and fingerprints of its
/// settings and secrets), what signs entitlements, the admin and API tokens (by fingerprint), and what else
/// changes what Apple or a person receives: where reports go, the public URL (the entitlements' issuer, the links
/// in every page), the `NO_LINE_ITEM` wait, the tax settings, the apps, the catalog, the retention, the proxies
/// trusted to name a client (the audit's own origins) and the ledger's durability.
/// Each is kept in the ledger's settings as last seen, so a change made between two starts is one entry with
/// the value before and after.
enum ConfigurationAudit {
    /// What a value recorded by an earlier release reads as now, where only its wording changed: no entry for it.
    static let earlierWordings = [
        // No exchange rates were recorded as the digest of nothing before "none".
        "configured " + digest(""): "none"
    ]

    /// Whether `before`, recorded by an earlier release for `setting`, is `value` in other words.
    static func isEarlierWording(_ before: String, of value: String, for setting: String) -> Bool {
        if earlierWordings[before] == value { return true }
        // The provider was recorded by its id alone before its settings were fingerprinted: "stripe" then is
        // "stripe (settings …, secrets …)" now.
        return setting == "audit.payment_provider" && value.hasPrefix(before + " (")
    }

    static func notice(_ configuration: Configuration, ledger: Ledger, trail: AuditTrail) {
        let fingerprint = try? AuditFingerprint(ledger: ledger)
        let observed: [(setting: String, action: String, value: String)] = [
            ("audit.commission_regimes", "config.commission_regimes", regimes(configuration)),
            ("audit.exchange_rates", "config.exchange_rates", exchangeRates(configuration)),
            ("audit.apple_key", "config.apple_key", appleKey(configuration)),
            ("audit.webhooks", "config.webhooks", webhooks(configuration, fingerprint: fingerprint)),
            ("audit.payment_provider", "config.payment_provider", paymentProvider(configuration, fingerprint)),
            ("audit.entitlement_signing", "config.entitlement_signing", entitlementSigning(configuration)),
            ("audit.access_tokens", "config.access_tokens", accessTokens(configuration, fingerprint)),
            ("audit.apple_endpoints", "config.apple_endpoints", appleEndpoints(configuration, fingerprint)),
            ("audit.public_url", "config.public_url", configuration.server.publicURL),
            ("audit.reporting", "config.reporting", reporting(configuration)),
            ("audit.tax", "config.tax", tax(configuration)),
            ("audit.apps", "config.apps", apps(configuration)),
            ("audit.catalog", "config.catalog", catalog(configuration)),
            ("audit.retention", "config.retention", retention(configuration)),
            ("audit.trusted_proxies", "config.trusted_proxies", trustedProxies(configuration)),
            ("audit.durability", "config.durability", "storage.durability " + configuration.storage.durability),
        ]
        for (setting, action, value) in observed {
            do {
                let before = try ledger.settings.setting(named: setting)
                guard before != value else { continue }
                if let before, isEarlierWording(before, of: value, for: setting) {
                    try ledger.settings.setSetting(named: setting, to: value)
                    continue
                }
                trail.append(
                    AuditEntry(
                        at: trail.clock.nowMilliseconds(),
                        actor: "linkout",
                        origin: "start",
                        action: action,
                        before: before,
                        after: value
                    )
                )
                try ledger.settings.setSetting(named: setting, to: value)
                if action == "config.access_tokens", let before, adminPart(before) != adminPart(value) {
                    try ledger.adminSessions.endAllAdminSessions()
                }
            } catch {
                trail.logger.error("configuration change not audited", ["action": action, "error": "\(error)"])
            }
        }
    }

    /// What signs the app's entitlements, a key file's key (by its key id) or the keys generated in the ledger,
    /// and how long they live: for a key file, switching the file is its rotation.
    static func entitlementSigning(_ configuration: Configuration) -> String {
        let entitlements = configuration.appEntitlements
        let lifetime = "lifetime \(entitlements.lifetimeSeconds) s"
        guard !entitlements.signingKeyFile.isEmpty else { return "generated keys, " + lifetime }
        let key = try? EntitlementKeyring.readKeyFile(entitlements.signingKeyFile)
        let kid = key.flatMap { try? EntitlementKey.publicJWK(of: $0).kid }
        return "key file " + (kid ?? "(unreadable)") + ", " + lifetime
    }

    /// The regimes by id with a digest of their terms, so an override of a built-in's rate is a change too.
    static func regimes(_ configuration: Configuration) -> String {
        let regimes = configuration.commission.regimes
        guard !regimes.isEmpty else { return "none" }
        return regimes.map(\.id).joined(separator: ", ") + " (terms " + digest(CommissionRegime.fingerprint(regimes))
            + ")"
    }

    /// Where the backend's entitlement events go and which secret signs them: the URL as `linkout check` shows it
    /// (only its scheme and host) with fingerprints of the whole URL and of the secret, keyed by the
    /// installation's secret (`AuditFingerprint`), so a copy of the log cannot test guesses of either.
    static func webhooks(_ configuration: Configuration, fingerprint: AuditFingerprint?) -> String {
        let webhooks = configuration.webhooks
        guard webhooks.isEnabled else { return "none" }
        guard let fingerprint else { return ShownURL.text(webhooks.url) + " (fingerprints unavailable)" }
        return shown(webhooks.url, as: "webhook-url", fingerprint) + ", secret "
            + fingerprint("webhook-secret\u{0}" + webhooks.secret)
    }

    /// A URL as the log keeps it: its scheme and host (`ShownURL`), and a keyed fingerprint of the whole URL under
    /// `kind`, so a change anywhere in it shows without what it may carry beyond its host.
    static func shown(_ url: String, as kind: String, _ fingerprint: AuditFingerprint) -> String {
        ShownURL.text(url) + " (URL " + fingerprint(kind + "\u{0}" + url) + ")"
    }

    /// The admin and API tokens by fingerprint (the admin one is the one its actions are recorded under,
    /// `admin:<fingerprint>`): replacing a token, say after a leak, is on record, and which token did what before
    /// and after.
    /// The admin token's part of `accessTokens`. A replaced admin token ends every dashboard session: a session
    /// row only stopped matching while another token was in force, and put back (a rollback of the secret, an old
    /// container) the old token brought its sessions back, a cookie stolen before the rotation with them.
    static func adminPart(_ accessTokens: String) -> Substring {
        accessTokens.prefix { $0 != "," }
    }

    static func accessTokens(_ configuration: Configuration, _ fingerprint: AuditFingerprint?) -> String {
        guard let fingerprint else { return "fingerprints unavailable" }
        return "admin " + (configuration.adminToken.map(fingerprint.callAsFunction) ?? "none") + ", API "
            + (configuration.apiToken.map(fingerprint.callAsFunction) ?? "none")
    }

    /// The payment provider, with fingerprints of its settings and of its secrets (keyed as the webhooks' are): a
    /// switch of account, of a test key for a live one, of its API host or its prices changes what the provider
    /// receives, and is a change here.
    static func paymentProvider(_ configuration: Configuration, _ fingerprint: AuditFingerprint?) -> String {
        let id = configuration.payments.provider
        guard let settings = configuration.payments.providers[id], !settings.values.isEmpty else { return id.rawValue }
        guard let fingerprint else { return id.rawValue + " (fingerprints unavailable)" }
        let secret = Set(settings.declared.filter(\.isSecret).map(\.key))
        let text = { (secrets: Bool) in
            settings.values.filter { secret.contains($0.key) == secrets }.sorted { $0.key < $1.key }
                .map { $0.key + "=" + $0.value }.joined(separator: "\u{0}")
        }
        return id.rawValue + " (settings " + fingerprint("provider-settings\u{0}" + text(false)) + ", secrets "
            + fingerprint("provider-secrets\u{0}" + text(true)) + ")"
    }

    /// Where reports are sent, by environment: another host receives every report and its signed JWT. Shown as
    /// the webhooks' URL is (scheme and host, a keyed fingerprint of the whole URL): a relay's URL may carry a key.
    static func appleEndpoints(_ configuration: Configuration, _ fingerprint: AuditFingerprint?) -> String {
        let text = { (url: String) in
            fingerprint.map { shown(url, as: "apple-url", $0) } ?? ShownURL.text(url) + " (URL unfingerprinted)"
        }
        let apple = configuration.apple
        // A proxy and a CA file of one's own can read every report and its JWT on the way: shown when set (and
        // the CA file by a digest of its bytes), so an installation without them records what it did before.
        let proxy = apple.proxy.map { ", proxy " + text($0) } ?? ""
        let authorities =
            apple.caFile.map { file in
                ", CA file \(file) "
                    + (fileBytes(file).map { digest(bytes: $0) } ?? "(unreadable)")
            } ?? ""
        return "production " + text(apple.productionURL) + ", sandbox " + text(apple.sandboxURL) + proxy + authorities
    }

    /// The proxies whose `X-Forwarded-For` names the client: the address the audit log records as an action's
    /// origin, and the one the rate limits count.
    static func trustedProxies(_ configuration: Configuration) -> String {
        let proxies = configuration.server.trustedProxies.sorted()
        return proxies.isEmpty ? "none" : proxies.joined(separator: ", ")
    }

    /// How long a token without a purchase waits before it is reported `NO_LINE_ITEM`.
    static func reporting(_ configuration: Configuration) -> String {
        "NO_LINE_ITEM after \(configuration.reporting.noLineItemAfterSeconds) s"
    }

    /// The tax country of a sale that names none, and how prices carry tax: both change every line item's tax.
    static func tax(_ configuration: Configuration) -> String {
        let rates =
            configuration.payments.taxRates.map { rates in
                rates.basisPoints.isEmpty
                    ? "none"
                    : "rates "
                        + digest(
                            rates.basisPoints.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                                .joined(separator: ",")
                        )
            } ?? "unset"
        return "default country \(configuration.payments.defaultTaxCountry), \(rates)"
    }

    /// The apps served, by bundle id and App Store id: a token of an app taken out is refused at the landing.
    static func apps(_ configuration: Configuration) -> String {
        configuration.apps.map { "\($0.bundleId.rawValue) (\($0.appAppleId))" }.sorted().joined(separator: ", ")
    }

    /// The products by id, with a digest of their kinds, prices and intervals: a price is what the person pays
    /// and what Apple is told.
    static func catalog(_ configuration: Configuration) -> String {
        let products = configuration.catalog.sorted { $0.id < $1.id }
        guard !products.isEmpty else { return "none" }
        let terms = products.map { product in
            product.id + ":" + product.kind.rawValue + ":"
                + product.prices.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.decimalText)" }
                .joined(separator: ",") + ":" + (product.interval.map { "\($0.count) \($0.unit.rawValue)" } ?? "")
        }
        return products.map(\.id).joined(separator: ", ") + " (terms " + digest(terms.joined(separator: ";")) + ")"
    }

    /// How long personal data is kept before the retention pass erases it.
    static func retention(_ configuration: Configuration) -> String {
        configuration.retention.personalDataDays.map { "personal data kept \($0) days" } ?? "personal data kept"
    }

    /// A digest of the configured rates and of the rates file's bytes; "none" when neither is configured.
    static func exchangeRates(_ configuration: Configuration) -> String {
        let file = configuration.payments.exchangeRatesFile
        if file == nil && configuration.payments.exchangeRates.entries.isEmpty { return "none" }
        let bytes = file.flatMap(fileBytes) ?? []
        return "configured " + digest(text(configuration.payments.exchangeRates))
            + (file.map { ", file \($0) " + digest(String(decoding: bytes, as: UTF8.self)) } ?? "")
    }

    /// The key id and issuer, and the RFC 7638 thumbprint of the key's public half: never the key.
    static func appleKey(_ configuration: Configuration) -> String {
        let apple = configuration.apple
        guard case .success(let credentials) = AppleCredentials.load(apple),
            let jwk = try? EntitlementKey.publicJWK(of: credentials.key)
        else { return "none usable (\(apple.keyId.isEmpty ? "no key id" : apple.keyId))" }
        return "key \(apple.keyId) of issuer \(apple.issuerId), public key \(jwk.kid)"
    }

    /// The rates as text in a fixed order (a dictionary's own order changes from one process to the next, and
    /// every start would look like a change).
    static func text(_ table: ExchangeRateTable) -> String {
        table.entries.sorted { $0.key < $1.key }.map { currency, entry in
            "\(currency)>\(entry.reportingCurrency):\(entry.undated ?? "")|"
                + entry.dated.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
        }.joined(separator: ";")
    }

    /// A short digest of settings text (not secret: regimes and rates are the operator's own configuration).
    static func digest(_ text: String) -> String {
        digest(bytes: Array(text.utf8))
    }

    /// A file the configuration names, read as the configuration's files are (a named pipe with no writer, or a
    /// device, never holds up the start); nil when it cannot be read.
    static func fileBytes(_ path: String) -> [UInt8]? {
        (try? ConfigurationFile.contents(atPath: path, limit: ConfigurationFile.textLimit).get()).map { Array($0) }
    }

    /// The same of a file's bytes as they are (a DER certificate is no text).
    static func digest(bytes: [UInt8]) -> String {
        ((try? SHA256.digest(bytes)).map { Hex.encode($0.prefix(6)) }) ?? "unknown"
    }
}
