import Crypto
import Domain
import ExternalPurchase
import Foundation
package import Lifecycle
import Payments
import Storage

/// `linkout check [--online]`: what an operator verifies before launch, one line per check. Offline: the
/// configuration and every secret it names, read and parsed; the ledger opens. Online (`PreflightCheck+Online`):
/// Apple takes the key on both hosts, the payment provider takes its key, the entitlement webhook receiver takes
/// a signed test event, and `publicURL` serves the health check and the app-site association file. Nothing is
/// reported to Apple, charged, or changed anywhere.
package struct PreflightCheck: Sendable {
    package struct Result: Sendable, Equatable {
        package var name: String
        package var passed: Bool
        package var detail: String

        /// `ok   name: detail` or `FAIL name: detail`.
        package var line: String { (passed ? "ok   " : "FAIL ") + name + ": " + detail }
    }

    let configuration: Configuration
    let clock: Clock

    package init(configuration: Configuration, clock: Clock = .system) {
        self.configuration = configuration
        self.clock = clock
    }

    /// The checks that need nothing but this machine.
    package func offline() -> [Result] {
        [
            appleKey(), publicURL(), apps(), catalog(), regimes(), payments(), apiAddresses(), webhooks(),
            accessTokens(), serverAddress(), serverFiles(), dataFolder(), ledger(),
        ]
    }

    static func pass(_ name: String, _ detail: String) -> Result { Result(name: name, passed: true, detail: detail) }
    static func fail(_ name: String, _ detail: String) -> Result { Result(name: name, passed: false, detail: detail) }

    /// Apple's key: the issuer is a UUID, the key ID ten characters, the `.p8` a P-256 key that signs.
    func appleKey() -> Result {
        let apple = configuration.apple
        switch AppleCredentials.load(apple) {
        case .failure(let problem):
            return Self.fail("apple key", "\(problem.field) \(problem.problem): nothing can be reported to Apple")
        case .success(let credentials):
            guard UUID(uuidString: apple.issuerId) != nil else {
                return Self.fail(
                    "apple key",
                    "apple.issuerId is not a UUID (App Store Connect → Users and Access → Keys)"
                )
            }
            guard apple.keyId.utf8.count == 10, apple.keyId.utf8.allSatisfy({ Self.isAlphanumeric($0) }) else {
                return Self.fail("apple key", "apple.keyId is not Apple's 10-character key ID")
            }
            do {
                _ = try credentials.key.sign(Array("linkout check".utf8))
            } catch {
                return Self.fail("apple key", "the key in apple.privateKeyFile cannot sign: \(error.description)")
            }
            return Self.pass("apple key", "P-256 key \(apple.keyId) of issuer \(apple.issuerId) signs")
        }
    }

    static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }

    /// `publicURL` is https, at an address people's phones reach: not this machine (a laptop trying linkout
    /// out), nor a private network's.
    func publicURL() -> Result {
        let url = configuration.server.publicURL
        let host = URL(string: url)?.host?.lowercased() ?? ""
        if PublicHost.isUnreachable(host) {
            return Self.fail(
                "public URL",
                "\(url) is this machine or a private network's: set server.publicURL to the https address people use"
            )
        }
        if configuration.server.isSecure { return Self.pass("public URL", url) }
        return Self.fail("public URL", "\(url) is not https: browsers and the App Store need https in production")
    }

    /// Every app: a reverse-DNS bundle ID, an Apple ID, and a way back into it.
    func apps() -> Result {
        for app in configuration.apps {
            let parts = app.bundleId.rawValue.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count >= 2, parts.allSatisfy({ !$0.isEmpty }) else {
                return Self.fail("apps", "\(app.bundleId) is not a bundle ID (reverse DNS, e.g. com.example.app)")
            }
            guard app.appAppleId > 0 else { return Self.fail("apps", "\(app.bundleId) has no appAppleId") }
            guard app.returnURL != nil || app.urlScheme != nil else {
                return Self.fail("apps", "\(app.bundleId) has neither returnURL nor urlScheme: no way back into it")
            }
        }
        return Self.pass("apps", configuration.apps.map(\.bundleId.rawValue).joined(separator: ", "))
    }

    /// Every product is priced in every currency the catalog sells in, so no shopper meets a product without a
    /// price in theirs.
    func catalog() -> Result {
        let currencies = Set(configuration.catalog.flatMap { $0.prices.keys })
        for product in configuration.catalog {
            let missing = currencies.subtracting(product.prices.keys).sorted()
            if !missing.isEmpty {
                return Self.fail("catalog", "\(product.id) has no price in \(missing.joined(separator: ", "))")
            }
        }
        // Nothing to sell through checkout is a deployment that cannot take a payment, unless the app's backend
        // sells and reports its own sales through the line-items API.
        if configuration.catalog.isEmpty {
            guard configuration.apiToken != nil else {
                return Self.fail("catalog", "no products and no apiToken: nothing can be bought or reported")
            }
            return Self.pass("catalog", "no products: sales come from your backend's line items")
        }
        return Self.pass(
            "catalog",
            "\(configuration.catalog.count) products in \(currencies.sorted().joined(separator: ", "))"
        )
    }

    /// The commission regimes in force, with their sources' confidence (parsed at load: unknown ids stop it).
    func regimes() -> Result {
        let regimes = configuration.commission.regimes
        guard !regimes.isEmpty else { return Self.pass("commission regimes", "none: no commission estimate") }
        return Self.pass(
            "commission regimes",
            regimes.map { "\($0.id) (\($0.confidence))" }.joined(separator: ", ")
        )
    }

    /// The payment provider is built from its settings; the demo takes no money.
    func payments() -> Result {
        let provider: any PaymentProvider
        do {
            provider = try configuration.payments.makeProvider(clock: clock)
        } catch {
            return Self.fail("payments", "\(error.field) \(error.problem)")
        }
        guard provider.mode != .simulated else {
            return Self.fail("payments", "payments.provider is demo: nothing is charged")
        }
        let offered = Set(configuration.catalog.flatMap { $0.prices.keys.map { CurrencyCode($0) } })
        let unsold = provider.unsoldCurrencies(offered)
        guard unsold.isEmpty else {
            return Self.fail(
                "payments",
                "\(provider.id.rawValue) does not sell in \(unsold.map(\.rawValue).joined(separator: ", ")): a price "
                    + "in it could never be paid; take it out of the catalog"
            )
        }
        return Self.pass("payments", "\(provider.id.rawValue), \(provider.mode == .live ? "live" : "test") mode")
    }

    /// Apple's hosts and the provider's API are reached over https: a key and every sale go there. Plain http
    /// only to this machine (a test fake).
    func apiAddresses() -> Result {
        let apple = configuration.apple
        var addresses = [("apple.productionURL", apple.productionURL), ("apple.sandboxURL", apple.sandboxURL)]
        let provider = configuration.payments.provider
        // Empty is unset: the provider's own https default.
        if let base = configuration.payments[provider, "apiBase"], !base.isEmpty {
            addresses.append(("payments.\(provider.rawValue).apiBase", base))
        }
        let plain = addresses.filter { !Self.isHTTPSOrLoopback($0.1) }
        guard plain.isEmpty else {
            return Self.fail(
                "api addresses",
                plain.map(\.0).joined(separator: ", ") + " not https: keys and sales would cross the network in clear"
            )
        }
        if let swapped = Self.swappedAppleHost(production: apple.productionURL, sandbox: apple.sandboxURL) {
            return Self.fail("api addresses", swapped)
        }
        do throws(ConfigurationError) {
            try configuration.checkTrustedCAFiles()
        } catch {
            return Self.fail("api addresses", "\(error.field) \(error.problem)")
        }
        return Self.pass("api addresses", "https (plain http only to this machine)")
    }

    /// Apple's production host named for sandbox reports, or the other way round (the recommended hosts and the
    /// older `itunes` ones Apple still serves), or one URL for both: Apple keeps the two apart (a production token
    /// sent to the sandbox is not reported), and both answer a check's Retrieve the same way, so only the names
    /// tell. A gateway of one's own may route both from one host by path or port, and one fake on this machine
    /// may stand for both.
    static func swappedAppleHost(production: String, sandbox: String) -> String? {
        func host(_ url: String) -> String? { URL(string: url)?.host?.lowercased() }
        if let named = host(production), AppStoreServerAPIClient.sandboxHosts.contains(named) {
            return "apple.productionURL names Apple's sandbox host: production tokens would be reported to the sandbox"
        }
        if let named = host(sandbox), AppStoreServerAPIClient.productionHosts.contains(named) {
            return "apple.sandboxURL names Apple's production host: sandbox tokens would be reported to production"
        }
        func normalized(_ url: String) -> String? {
            guard let parsed = URL(string: url), let host = parsed.host?.lowercased() else { return nil }
            let path = parsed.path.hasSuffix("/") ? String(parsed.path.dropLast()) : parsed.path
            let scheme = parsed.scheme?.lowercased() ?? ""
            return "\(scheme)://\(host):\(parsed.port ?? (scheme == "http" ? 80 : 443))\(path)"
        }
        // One fake on this machine may stand for both (tests, a local trial).
        if let shared = normalized(production), shared == normalized(sandbox),
            !(host(production).map(PublicHost.isLoopback) ?? false)
        {
            return "apple.productionURL and apple.sandboxURL are one URL: Apple keeps production and sandbox apart"
        }
        return nil
    }

    /// `https://`, or `http://` to this machine with no user part (a fake, as the tests run): parsed, so
    /// `http://127.0.0.1:x@example.com` is the other host it is.
    static func isHTTPSOrLoopback(_ url: String) -> Bool {
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), let host = parsed.host else {
            return false
        }
        return scheme == "https" || (scheme == "http" && parsed.user == nil && PublicHost.isLoopback(host))
    }

    /// The entitlement webhook receiver is https and has a secret, when one is set.
    func webhooks() -> Result {
        let webhooks = configuration.webhooks
        guard webhooks.isEnabled else { return Self.pass("webhooks", "no receiver (webhooks.url is empty)") }
        guard webhooks.url.hasPrefix("https://") else {
            return Self.fail("webhooks", "webhooks.url is not https: the events carry purchases")
        }
        guard webhooks.secret.utf8.count >= Self.shortestSecret else {
            return Self.fail("webhooks", "webhooks.secret is shorter than \(Self.shortestSecret) characters")
        }
        return Self.pass("webhooks", ShownURL.text(webhooks.url))
    }

    /// The fewest characters a secret of ours may have (a webhook's signing secret; an access token is told).
    static let shortestSecret = 16

    /// The admin and API tokens: never the same (the backend's credential would open `/admin` too), and long
    /// enough not to be guessed (the failed-attempt throttle counts per client address, not in all).
    func accessTokens() -> Result {
        let tokens = [("LINKOUT_ADMIN_TOKEN", configuration.adminToken), ("LINKOUT_API_TOKEN", configuration.apiToken)]
            .compactMap { name, token in token.map { (name, $0) } }
        if tokens.count == 2 && tokens[0].1 == tokens[1].1 {
            return Self.fail(
                "access tokens",
                "LINKOUT_ADMIN_TOKEN and LINKOUT_API_TOKEN are the same: your backend's token would open /admin"
            )
        }
        guard !tokens.isEmpty else {
            return Self.pass("access tokens", "none set: /admin and the backend APIs are off")
        }
        let short = tokens.filter { $0.1.utf8.count < Self.shortestSecret }.map(\.0)
        let advice =
            short.isEmpty
            ? ""
            : "; " + short.joined(separator: " and ") + " shorter than \(Self.shortestSecret) characters: use "
                + "`openssl rand -hex 32`"
        return Self.pass("access tokens", tokens.map(\.0).joined(separator: " and ") + " set" + advice)
    }

    /// The ledger is there, at the schema this release runs: read without opening it, so the check neither
    /// creates a ledger in a mistyped folder nor migrates one an older release still serves.
    func ledger() -> Result {
        let storage = configuration.storage
        let version: Int64
        do {
            if let target = storage.postgresTarget {
                version = try Ledger.existingSchemaVersion(postgres: target)
            } else {
                version = try Ledger.existingSchemaVersion(directory: storage.dataDir)
            }
        } catch  where error.code == .notFound {
            return Self.fail(
                "ledger",
                "\(error.message) (the server makes it on its first start; if this deployment has one already, "
                    + "check the path: a server started there would begin an empty ledger)"
            )
        } catch  where error.code == .dataFolder || error.isPermissionDenied || error.systemError == EROFS {
            // There, but out of this user's reach (a folder or file of another user's, a read-only disk): said
            // as such, not as missing or damaged.
            return Self.fail("ledger", error.messageWithReason)
        } catch  where error.code == .unavailable {
            return Self.fail("ledger", "cannot reach the database: \(error.message)")
        } catch {
            // There, and unreadable (a damaged file): the server refuses it too.
            return Self.fail(
                "ledger",
                "\(error.message): the server cannot start on it (README \"Backup and restore\")"
            )
        }
        let engine = storage.postgresURL == nil ? storage.dataDir : "PostgreSQL"
        guard version == Ledger.schemaVersion else {
            return Self.fail(
                "ledger",
                "\(engine) is at schema \(version); this release runs \(Ledger.schemaVersion)"
                    + (version < Ledger.schemaVersion ? " (it migrates at its next start)" : "")
            )
        }
        if storage.postgresTarget == nil, let missing = try? Ledger.missingSchema(directory: storage.dataDir) {
            return Self.fail(
                "ledger",
                "\(engine) lacks \(missing) of schema \(version) (changed by hand?): the server may stop on it, or run "
                    + "without what it lacks; restore a backup (README \"Backup and restore\")"
            )
        }
        if storage.postgresTarget == nil {
            do {
                if let findings = try Ledger.damage(directory: storage.dataDir) {
                    return Self.fail(
                        "ledger",
                        "\(engine) is damaged (SQLite's quick check: \(findings)): a server would start on it and fail "
                            + "to read what is damaged; restore the last good backup (README \"Backup and restore\")"
                    )
                }
            } catch {
                return Self.fail("ledger", "\(engine) could not be checked whole: \(error.message)")
            }
        }
        if let retired = retiredKeyFileKey() {
            return Self.fail(
                "ledger",
                "appEntitlements.signingKeyFile holds the key \(retired), which was retired in \(engine): the server "
                    + "refuses to start with it; name a new key file"
            )
        }
        // Safe on disk, and not lost: said so that an export or close run before the next start is not taken as
        // the whole ledger.
        let waiting = storage.postgresURL == nil ? Ledger.visitsAwaitingReplay(directory: storage.dataDir) : 0
        let replay =
            waiting == 0
            ? ""
            : "; \(waiting) landing(s) in the journal are not in the tables yet: the server applies them at its next start"
        return Self.pass("ledger", "\(engine), schema \(version)\(replay)")
    }

    /// The key id of the configured key file when the ledger retired that key (as the server's start finds it).
    private func retiredKeyFileKey() -> String? {
        let file = configuration.appEntitlements.signingKeyFile
        guard !file.isEmpty, let key = try? EntitlementKeyring.readKeyFile(file),
            let kid = try? EntitlementKey.publicJWK(of: key).kid
        else { return nil }
        let storage = configuration.storage
        let retired =
            try?
            (storage.postgresTarget.map { try Ledger.retiredSigningKeys(postgres: $0) }
            ?? Ledger.retiredSigningKeys(directory: storage.dataDir))
        return retired?.contains(kid) == true ? kid : nil
    }
}
