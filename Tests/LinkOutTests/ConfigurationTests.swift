import ExternalPurchase
import Foundation
import HTTPServer
import Outbound
import Payments
import Testing

@testable import LinkOut

@Suite("Configuration")
struct ConfigurationTests {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    func parse(_ json: String) throws(ConfigurationError) -> Configuration {
        try Configuration.parse(Data(json.utf8))
    }

    func failure(_ json: String) -> ConfigurationError? {
        do {
            _ = try parse(json)
            return nil
        } catch {
            return error
        }
    }

    @Test func theShippedConfigLoads() throws {
        let data = try Data(contentsOf: Self.repositoryRoot.appendingPathComponent("config.json"))
        let configuration = try Configuration.parse(data)
        #expect(configuration.server.port == 8080)
        #expect(configuration.storage.dataDir == "data")
    }

    @Test func badFieldsAreNamed() throws {
        #expect(failure(#"{"server": {"port": "80"}}"#)?.field == "server.port")
        #expect(failure(#"{"server": {"port": 70000}}"#)?.field == "server.port")
        #expect(failure(#"{"server": {"port": 80.5}}"#)?.field == "server.port")
        #expect(failure(#"{"server": {"prot": 80}}"#)?.field == "server.prot")
        #expect(failure(#"{"server": {"publicURL": "nope"}}"#)?.field == "server.publicURL")
        // A key written twice (two `server` sections) is refused, not half taken.
        let twice = failure(#"{"server": {"port": 1}, "server": {"port": 2}}"#)
        #expect(twice?.field == "config.json" && twice?.problem.contains(#""server" twice"#) == true)
        #expect(failure(#"{"server": {"port": 1, "port": 2}}"#)?.problem.contains(#""port" twice"#) == true)
        // The same in a file an editor saved with a UTF-8 byte order mark: read past the mark, as the parser does.
        #expect(
            failure("\u{FEFF}" + #"{"server": {"port": 1, "port": 2}}"#)?.problem.contains(#""port" twice"#) == true
        )
        #expect(try parse("\u{FEFF}" + #"{"server": {"port": 1}}"#).server.port == 1)
        // UTF-16 (told by its NUL bytes), which the parser reads and the check for keys named twice did not.
        let utf16 = Data(#"{"server": {"port": 1, "port": 2}}"#.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })
        #expect(
            throws: ConfigurationError(
                field: "config.json",
                problem: "is not UTF-8 text (UTF-16, UTF-32, Latin-1?): save it as UTF-8"
            )
        ) {
            _ = try Configuration.parse(utf16)
        }
        // Apple's notifications never take over a route of linkout's own.
        #expect(failure(#"{"apple": {"notificationPath": "/v1/tokens"}}"#)?.field == "apple.notificationPath")
        #expect(failure(#"{"apple": {"notificationPath": "/admin"}}"#)?.field == "apple.notificationPath")
        #expect(failure(#"{"apple": {"notificationPath": "/notifications/apple"}}"#) == nil)
        // The base of every link handed out carries no credentials, query or fragment.
        for url in [
            "https://u:p@pay.example.com", "https://pay.example.com/?a=1", "https://pay.example.com/#x",
            "https://pay.example.com:99999/", "https://pay.example.com:0/",
            // A path: the provider's return URLs carried it and the server's routes do not.
            "https://pay.example.com/shop", "https://pay.example.com/shop/",
        ] {
            #expect(failure(#"{"server": {"publicURL": "\#(url)"}}"#)?.field == "server.publicURL", "\(url)")
        }
        for url in ["https://pay.example.com", "https://pay.example.com/", "http://127.0.0.1:8080"] {
            #expect(failure(#"{"server": {"publicURL": "\#(url)"}}"#) == nil, "\(url)")
        }
        #expect(failure(#"{"server": {"trustedProxies": [1]}}"#)?.field == "server.trustedProxies[0]")
        for proxy in ["proxy.local", "10.0.0.0/8", "10.0.0.1:80", ""] {
            let refused = failure(#"{"server": {"trustedProxies": ["127.0.0.1", "\#(proxy)"]}}"#)
            #expect(refused?.field == "server.trustedProxies[1]", "\(proxy)")
        }
        // Written as the server writes a peer's address, so each one matches.
        let proxies = try parse(
            #"{"server": {"trustedProxies": ["10.0.0.1", "::1", "2001:DB8:0::1", "::ffff:127.0.0.1"]}}"#
        )
        #expect(proxies.server.trustedProxies == ["10.0.0.1", "::1", "2001:db8::1", "127.0.0.1"])
        #expect(failure(#"{"storage": []}"#)?.field == "storage")
        #expect(failure(#"{"logging": {"level": "loud"}}"#)?.field == "logging.level")
        #expect(failure(#"{"surprise": 1}"#)?.field == "surprise")
        #expect(
            failure(#"{"apps": [{"bundleId": "a", "appAppleId": 1, "name": "A", "colour": "red"}]}"#)?.field
                == "apps[0].colour"
        )
        #expect(
            failure(#"{"apps": [{"bundleId": "a", "appAppleId": "1", "name": "A"}]}"#)?.field == "apps[0].appAppleId"
        )
        #expect(
            failure(#"{"catalog": [{"id": "p", "name": {"en": "P"}, "price": {"EUR": "9.999"}}]}"#)?.field
                == "catalog[0].price.EUR"
        )
        #expect(
            failure(#"{"catalog": [{"id": "p", "name": {"en": "P"}, "price": {"EUR": 9.99}}]}"#)?.field
                == "catalog[0].price.EUR"
        )
        // Taken here once, it failed every sale with "payment is not available right now".
        let unchargeable = failure(
            #"{"catalog": [{"id": "p", "name": {"en": "P"}, "price": {"EUR": "999999999999.99"}}]}"#
        )
        #expect(unchargeable?.field == "catalog[0].price.EUR")
        #expect(unchargeable?.problem.contains("too many digits") == true)
        // Each bad price says what is wrong with it, in its currency's own decimals.
        let yen = failure(#"{"catalog": [{"id": "p", "name": {"en": "P"}, "price": {"JPY": "480.5"}}]}"#)
        #expect(
            yen?.problem == #"cannot be charged: "480.5" has more than the 0 decimals of JPY"#,
            "\(String(describing: yen))"
        )
        let padded = failure(#"{"catalog": [{"id": "p", "name": {"en": "P"}, "price": {"JPY": "480.00"}}]}"#)
        #expect(padded?.problem == #"must be digits with at most the 0 decimals of JPY, such as "2999""#)
        let lower = failure(#"{"catalog": [{"id": "p", "name": {"en": "P"}, "price": {"eur": "1.00"}}]}"#)
        #expect(lower?.field == "catalog[0].price.eur" && lower?.problem.contains("in capitals") == true)
        // Past the most one line item reports to Apple (a billion units of the reporting currency), in its own
        // currency or through a rate: such a sale was paid and then set aside, never reported.
        let billion = failure(#"{"catalog": [{"id": "p", "name": {"en": "P"}, "price": {"VND": "1000000001"}}]}"#)
        #expect(billion?.field == "catalog[0].price.VND" && billion?.problem.contains("a billion VND") == true)
        #expect(
            try parse(#"{"catalog": [{"id": "p", "name": {"en": "P"}, "price": {"VND": "1000000000"}}]}"#)
                .catalog.count == 1
        )
        let converted = failure(
            #"{"payments": {"exchangeRates": {"KWD": {"reportingCurrency": "EUR", "#
                + #""rates": {"2026-11-30": "2.5", "2026-12-01": "3.3"}}}}, "#
                + #""catalog": [{"id": "p", "name": {"en": "P"}, "price": {"KWD": "310000000.000"}}]}"#
        )
        #expect(converted?.field == "catalog[0].price.KWD" && converted?.problem.contains("a billion EUR") == true)
        #expect(failure(#"{"landing": {"paths": ["/checkout"]}}"#)?.field == "landing.paths[0]")
        #expect(failure(#"{"landing": {"defaultBundleId": "com.unknown"}}"#)?.field == "landing.defaultBundleId")
        #expect(failure(#"{"reporting": {"noLineItemAfterSeconds": -1}}"#)?.field == "reporting.noLineItemAfterSeconds")
        #expect(failure(#"{"apple": {"productionURL": "ftp://x"}}"#)?.field == "apple.productionURL")
        #expect(failure(#"{"apple": {"proxy": 3128}}"#)?.field == "apple.proxy")
        #expect(failure(#"{"apple": {"caFile": {}}}"#)?.field == "apple.caFile")
        // libpq takes a postgresql:// URI or key=value settings; anything else failed as a connection error.
        #expect(failure(#"{"storage": {"postgresURL": "mysql://x"}}"#)?.field == "storage.postgresURL")
        #expect(failure(#"{"storage": {"postgresURL": "POSTGRESQL://db/l"}}"#)?.field == "storage.postgresURL")
        // A bare name is a database name to libpq (its host from PGHOST), as it was.
        #expect(
            try parse(#"{"storage": {"leaseSeconds": 20, "postgresURL": "linkout"}}"#).storage.postgresURL == "linkout"
        )
        #expect(
            try parse(#"{"storage": {"leaseSeconds": 20, "postgresURL": "host=/run/pg dbname=l"}}"#).storage
                .postgresURL == "host=/run/pg dbname=l"
        )
        // A claim must outlast the send it covers (several instances on one database).
        #expect(failure(#"{"storage": {"leaseSeconds": 10}}"#)?.field == "storage.leaseSeconds")
        #expect(failure(#"{"storage": {"leaseSeconds": 1}}"#)?.field == "storage.leaseSeconds")
        #expect(
            try parse(#"{"storage": {"leaseSeconds": 20, "postgresURL": "postgresql://db/l"}}"#).storage.postgresURL
                == "postgresql://db/l"
        )
        #expect(failure(#"{"storage": {"postgresPassword": "x"}}"#)?.field == "storage.postgresPassword")
        // C would cut it short: this bound 127.0.0.1.
        #expect(failure(#"{"server": {"host": "127.0.0.1\u0000evil"}}"#)?.field == "server.host")
        #expect(failure(#"{"apps": [{"bundleId": "a", "appAppleId": 1, "name": "A\u0000"}]}"#)?.field == "apps[0].name")
        #expect(failure("{not json")?.field == "config.json")
        #expect(failure("[]")?.field == "config.json")
    }

    @Test func paymentsAndTheWayBackAreChecked() {
        #expect(failure(#"{"payments": {"provider": "paypal"}}"#)?.field == "payments.provider")
        #expect(failure(#"{"payments": {"defaultTaxCountry": "DE"}}"#)?.field == "payments.defaultTaxCountry")
        #expect(
            failure(#"{"payments": {"exchangeRates": {"KWD": {"reportingCurrency": "GBP", "rate": "2.9"}}}}"#)?.field
                == "payments.exchangeRates.KWD"
        )
        #expect(
            failure(#"{"catalog": [{"id": "p", "name": {"en": "P"}, "price": {"EUR": "1"}, "interval": "month"}]}"#)?
                .field == "catalog[0].interval"
        )
        // iOS keeps a universal link to the page's own host in Safari: a return link there cannot open the app.
        let sameHost = failure(
            #"{"server": {"publicURL": "https://pay.example.com"}, "apps": [{"bundleId": "com.example", "appAppleId": 1234567890, "name": "E", "returnURL": "https://pay.example.com/open"}]}"#
        )
        #expect(sameHost?.field == "apps[0].returnURL")
        #expect(sameHost?.problem.contains("another domain") == true)
        #expect(
            failure(#"{"apps": [{"bundleId": "com.example", "appAppleId": 1, "name": "E", "teamId": "abc"}]}"#)?.field
                == "apps[0].teamId"
        )
        // The app's way back is `<urlScheme>://purchase?code=…`: a space or a "://" made a link that opens nothing.
        for scheme in ["bad scheme", "example://", "1app", "", "ex_ample"] {
            let app =
                #"{"apps": [{"bundleId": "com.example", "appAppleId": 1, "name": "E", "urlScheme": "\#(scheme)"}]}"#
            #expect(failure(app)?.field == "apps[0].urlScheme", "\(scheme)")
        }
        for scheme in ["example", "my-app.v2+x", "A1"] {
            let app =
                #"{"apps": [{"bundleId": "com.example", "appAppleId": 1, "name": "E", "urlScheme": "\#(scheme)"}]}"#
            #expect(failure(app) == nil, "\(scheme)")
        }
        #expect(failure(#"{"webhooks": {"url": "not a url"}}"#)?.field == "webhooks.url")
        // libcurl takes a URL as it is: a pasted space or line break failed every call to it after a clean start.
        for url in ["http://127.0.0.1:9/hook ", #"http://127.0.0.1:9/h\r\nX-Injected: y"#, "http://127.0.0.1:9/é"] {
            let configuration = #"{"webhooks": {"url": "\#(url)", "secret": "0123456789abcdef"}}"#
            #expect(failure(configuration)?.field == "webhooks.url")
        }
        for url in [
            "https://hooks.example.com/in?x=1", "http://[::1]:8080/hooks", "https://h.example.com/a%20b",
            "https://user:pass@h.example.com/",
        ] {
            #expect(OutboundURL.isValid(url), "\(url)")
        }
        #expect(!OutboundURL.isValid("https://h.example:0/") && !OutboundURL.isValid("https://h.example.com/ü"))
    }

    @Test func whatThePagesShowAboutTheSellerIsRead() throws {
        let app = #"{"bundleId": "com.example", "appAppleId": 1, "name": "E""#
        let shipped = try Configuration.parse(
            Data(contentsOf: Self.repositoryRoot.appendingPathComponent("config.json"))
        )
        #expect(shipped.apps[0].seller == "Example Apps GmbH")
        #expect(shipped.apps[0].legal.supportEmail == "support@example.com")
        #expect(shipped.catalog[0].description(language: "de")?.hasPrefix("Alle Pro-Funktionen") == true)
        #expect(shipped.catalog[0].description(language: "fr")?.hasPrefix("All Pro features") == true)
        // The pages' CSP loads images only from linkout's own host.
        #expect(failure(#"{"apps": [\#(app), "icon": "https://cdn.example.com/icon.png"}]}"#)?.field == "apps[0].icon")
        #expect(failure(#"{"apps": [\#(app), "icon": "//cdn.example.com/icon.png"}]}"#)?.field == "apps[0].icon")
        #expect(try parse(#"{"apps": [\#(app), "icon": "/static/icon.png"}]}"#).apps[0].icon == "/static/icon.png")
        #expect(
            failure(#"{"apps": [\#(app), "legal": {"supportEmail": "nobody"}}]}"#)?.field
                == "apps[0].legal.supportEmail"
        )
        #expect(failure(#"{"apps": [\#(app), "legal": {"terms": "javascript:x"}}]}"#)?.field == "apps[0].legal.terms")
        #expect(failure(#"{"apps": [\#(app), "legal": {"impressum": "/x"}}]}"#)?.field == "apps[0].legal.impressum")
        // A page's link may hold what a browser takes; only URLs the server calls are held to visible ASCII.
        #expect(
            try parse(#"{"apps": [\#(app), "legal": {"terms": "https://example.de/über-uns"}}]}"#).apps[0].legal
                .terms == "https://example.de/über-uns"
        )
        #expect(
            try parse(#"{"apps": [\#(app), "legal": {"imprint": "/imprint.html"}}]}"#).apps[0].legal.imprint
                == "/imprint.html"
        )
        #expect(
            failure(#"{"catalog": [{"id": "a", "name": {"en": "A"}, "price": {"EUR": "1"}, "description": "x"}]}"#)?
                .field
                == "catalog[0].description"
        )
    }

    @Test func aStripeShopOrAWebhookReceiverNeedsItsSecrets() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-config-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func load(_ json: String, _ environment: [String: String] = [:]) -> ConfigurationError? {
            let file = directory.appendingPathComponent("\(UUID()).json")
            do {
                try Data(json.utf8).write(to: file)
                _ = try Configuration.load(overrides: .init(configPath: file.path), environment: environment)
                return nil
            } catch let error as ConfigurationError {
                return error
            } catch {
                return ConfigurationError(field: "io", problem: "\(error)")
            }
        }
        #expect(load(#"{"payments": {"provider": "stripe"}}"#)?.field == "payments.stripe.secretKey")
        #expect(
            load(#"{"payments": {"provider": "stripe"}}"#, ["LINKOUT_STRIPE_SECRET_KEY": "sk_test_x"])?.field
                == "payments.stripe.webhookSecret"
        )
        #expect(
            load(
                #"{"payments": {"provider": "stripe"}}"#,
                ["LINKOUT_STRIPE_SECRET_KEY": "sk_test_x", "LINKOUT_STRIPE_WEBHOOK_SECRET": "whsec_x"]
            ) == nil
        )
        // A key pasted with a space or a line break in it: refused at start, not on every call to the provider.
        for key in ["sk_live_SECRET VALUE", "sk_live_SECRET\n123"] {
            #expect(
                load(
                    #"{"payments": {"provider": "stripe"}}"#,
                    ["LINKOUT_STRIPE_SECRET_KEY": key, "LINKOUT_STRIPE_WEBHOOK_SECRET": "whsec_x"]
                )?.field == "payments.stripe.secretKey"
            )
        }
        #expect(load(#"{"webhooks": {"url": "https://api.example.com/hooks"}}"#)?.field == "webhooks.secret")
        #expect(
            load(#"{"webhooks": {"url": "https://api.example.com/hooks"}}"#, ["LINKOUT_WEBHOOK_SECRET": "s"]) == nil
        )
    }

    /// A file of trusted certificates that is not there failed every call, much later, as a TLS error: `serve`
    /// and `check` refuse it, while a command that calls no one (a restore on another host) reads the
    /// configuration as it is.
    @Test func aTrustedCertificateFileMustBeThereToServe() throws {
        let missing = try parse(#"{"apple": {"caFile": "/nonexistent/ca.pem"}}"#)
        let refused = #expect(throws: ConfigurationError.self) { try missing.checkTrustedCAFiles() }
        #expect(refused?.field == "apple.caFile" && refused?.problem.contains("cannot be found") == true)
        let folder = try parse(#"{"apple": {"caFile": "/tmp"}}"#)
        let notAFile = #expect(throws: ConfigurationError.self) { try folder.checkTrustedCAFiles() }
        #expect(notAFile?.problem.contains("not a regular file") == true)
        var stripe = try parse(#"{"payments": {"stripe": {"caFile": "/nonexistent/ca.pem"}}}"#)
        stripe.payments.provider = .stripe
        let provider = #expect(throws: ConfigurationError.self) { try stripe.checkTrustedCAFiles() }
        #expect(provider?.field == "payments.stripe.caFile")
        #expect(throws: ConfigurationError.self) { try Application(configuration: missing) }
        let check = PreflightCheck(configuration: missing).apiAddresses()
        #expect(!check.passed && check.detail.contains("apple.caFile"), "\(check)")
        #expect(try parse("{}").trustedCAFiles.isEmpty)
        // A readable file of something else is refused as well; one of PEM certificates is taken.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-ca-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let junk = directory.appendingPathComponent("junk.pem").path
        try Data("not a pem\n".utf8).write(to: URL(fileURLWithPath: junk))
        let noCertificate = #expect(throws: ConfigurationError.self) {
            try parse(#"{"apple": {"caFile": "\#(junk)"}}"#).checkTrustedCAFiles()
        }
        #expect(
            noCertificate?.problem.contains("holds no PEM certificate") == true,
            "\(String(describing: noCertificate))"
        )
        let roots = directory.appendingPathComponent("roots.pem").path
        try Data(AppleRootCertificates.defaultPEMs.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: roots))
        try parse(#"{"apple": {"caFile": "\#(roots)"}}"#).checkTrustedCAFiles()
    }

    @Test func perClientConnectionCapAndFirstByteTimeoutReachTheHTTPCore() throws {
        let defaults = Configuration().httpServer
        #expect(defaults.maxConnectionsPerClient == 256)
        #expect(defaults.firstByteTimeout == .seconds(10))
        let configured = try parse(#"{"server": {"maxConnectionsPerClient": 8, "firstByteTimeoutSeconds": 3}}"#)
        #expect(configured.server.maxConnectionsPerClient == 8)
        #expect(configured.httpServer.maxConnectionsPerClient == 8)
        #expect(configured.httpServer.firstByteTimeout == .seconds(3))
        #expect(failure(#"{"server": {"maxConnectionsPerClient": 0}}"#)?.field == "server.maxConnectionsPerClient")
        #expect(failure(#"{"server": {"firstByteTimeoutSeconds": 0}}"#)?.field == "server.firstByteTimeoutSeconds")
    }

    @Test func environmentBeatsFileAndFlagsBeatEnvironment() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-config-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("c.json")
        try Data(#"{"server": {"host": "10.0.0.1", "port": 1000}, "storage": {"dataDir": "file"}}"#.utf8).write(
            to: file
        )
        let environment = ["LINKOUT_CONFIG": file.path, "LINKOUT_PORT": "2000", "LINKOUT_DATA_DIR": "env"]
        let fromEnvironment = try Configuration.load(environment: environment)
        #expect(fromEnvironment.server.host == "10.0.0.1")
        #expect(fromEnvironment.server.port == 2000)
        #expect(fromEnvironment.storage.dataDir == "env")
        let fromFlags = try Configuration.load(
            overrides: .init(port: "0", dataDir: "flag"),
            environment: environment
        )
        #expect(fromFlags.server.port == 0)
        #expect(fromFlags.storage.dataDir == "flag")
    }

    @Test func secretsComeFromTheEnvironmentOrFiles() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-secret-\(UUID())")
        try Data("from-a-file\n".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let configuration = try Configuration.load(
            environment: ["LINKOUT_ADMIN_TOKEN_FILE": file.path, "LINKOUT_API_TOKEN": "from-env"]
        )
        #expect(configuration.adminToken == "from-a-file")
        #expect(configuration.apiToken == "from-env")
        // A token no request can carry (two lines in its file, a CRLF environment file's `\r`) was taken, and
        // every call with it got 401.
        let twoLines = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-secret-\(UUID())")
        try Data("ADMINSECRET_aaaaaaaaaaaaaa\r\nold_token_bbbbbbb\n".utf8).write(to: twoLines)
        defer { try? FileManager.default.removeItem(at: twoLines) }
        for environment in [
            ["LINKOUT_ADMIN_TOKEN_FILE": twoLines.path], ["LINKOUT_API_TOKEN": "abcdefghijklmnopqrst\r"],
            ["LINKOUT_API_TOKEN": "abcdefghij\u{2028}klmnopqrst"],
        ] {
            let refused = #expect(throws: ConfigurationError.self) { try Configuration.load(environment: environment) }
            #expect(refused?.problem.contains("control character") == true, "\(environment)")
        }
        // Both forms of one secret: one was silently ignored (the file won), so neither is taken.
        for name in ["LINKOUT_ADMIN_TOKEN", "LINKOUT_WEBHOOK_SECRET", "LINKOUT_STRIPE_SECRET_KEY"] {
            #expect(
                throws: ConfigurationError(
                    field: name + "_FILE",
                    problem: "is set as well as \(name): set one of them"
                )
            ) {
                try Configuration.load(environment: [name: "from-env", name + "_FILE": file.path])
            }
        }
        #expect(
            throws: ConfigurationError(
                field: "LINKOUT_API_TOKEN_FILE",
                problem: "cannot read /nonexistent/secret: there is no such file"
            )
        ) {
            try Configuration.load(environment: ["LINKOUT_API_TOKEN_FILE": "/nonexistent/secret"])
        }
        // A file past its bound is refused, not read whole (a 3 GB rate file took 3 GB); a folder cannot be read.
        let huge = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-huge-\(UUID())")
        try Data(repeating: 0x61, count: ConfigurationFile.secretLimit + 1).write(to: huge)
        defer { try? FileManager.default.removeItem(at: huge) }
        let refused = #expect(throws: ConfigurationError.self) {
            try Configuration.load(environment: ["LINKOUT_API_TOKEN_FILE": huge.path])
        }
        #expect(refused?.problem.contains("is larger than 64 KiB") == true)
        #expect(ConfigurationFile.contents(atPath: huge.path, limit: 10) == .failure(.larger(than: 10)))
        #expect(ConfigurationFile.contents(atPath: file.path, limit: 12) == .success(Data("from-a-file\n".utf8)))
        #expect(
            ConfigurationFile.contents(atPath: FileManager.default.temporaryDirectory.path, limit: 10)
                == .failure(.unreadable)
        )
        // The key files say so in the same words (Foundation's were "NSCocoaErrorDomain error 256" for a folder).
        var apple = Configuration.Apple()
        apple.issuerId = "57246542-96fe-1a63-e053-0824d011072a"
        apple.keyId = "2X9R4HXF34"
        apple.privateKeyFile = FileManager.default.temporaryDirectory.path
        guard case .failure(let folder) = AppleCredentials.load(apple) else {
            Issue.record("a folder was read as a key")
            return
        }
        #expect(folder.field == "apple.privateKeyFile")
        #expect(folder.problem.hasSuffix(": not a readable file"), "\(folder.problem)")
        #expect(throws: ConfigurationError.self) { try EntitlementKeyring.readKeyFile("/nonexistent/key.pem") }
    }

    @Test func aMissingFileThatWasAskedForIsAnError() {
        #expect(throws: ConfigurationError.self) {
            try Configuration.load(overrides: .init(configPath: "/nonexistent/linkout.json"), environment: [:])
        }
        #expect(throws: ConfigurationError.self) {
            try Configuration.load(environment: ["LINKOUT_PORT": "eighty"])
        }
    }

    /// An empty data folder names none: refused as the configuration's mistake (exit 2) where it is written
    /// (`--data-dir ""`, `"dataDir": ""`); an empty variable (unset in a compose file) is unset, as the others.
    @Test func anEmptyDataFolderIsAConfigurationError() throws {
        let problem = "must name a folder (it is empty)"
        #expect(try Configuration.load(environment: ["LINKOUT_DATA_DIR": ""]).storage.dataDir == "data")
        // Every variable alike: an empty one stopped the server, or moved it to a new SQLite ledger.
        let empty = try Configuration.load(
            environment: [
                "LINKOUT_PORT": "", "LINKOUT_LOG_LEVEL": "", "LINKOUT_ACCESS_LOG": "", "LINKOUT_PAYMENTS_PROVIDER": "",
                "LINKOUT_RATE_LIMIT_PER_SECOND": "", "LINKOUT_ADMIN_TOKEN_FILE": "", "LINKOUT_DATABASE_URL": "",
            ]
        )
        #expect(empty.server.port == Configuration().server.port)
        #expect(try Configuration.load(environment: ["LINKOUT_CONFIG": ""]).server.port == Configuration().server.port)
        var onPostgres = try Configuration.parse(
            Data(#"{"storage": {"leaseSeconds": 20, "postgresURL": "postgresql://db/l"}}"#.utf8)
        )
        try onPostgres.apply(environment: ["LINKOUT_DATABASE_URL": ""])
        #expect(onPostgres.storage.postgresURL == "postgresql://db/l")
        // A URI libpq would refuse quoting its password (a `/` in it) is refused here, naming only the field.
        let slash = #"postgresql://linkout:Xk3fQ/P9+qZz@db/l"#
        let uriProblem = "the password in the URI holds '/': percent-encode it (%2F)"
        #expect(throws: ConfigurationError(field: "LINKOUT_DATABASE_URL", problem: uriProblem)) {
            try onPostgres.apply(environment: ["LINKOUT_DATABASE_URL": slash])
        }
        #expect(throws: ConfigurationError(field: "storage.postgresURL", problem: uriProblem)) {
            try Configuration.parse(Data(#"{"storage": {"postgresURL": "\#(slash)"}}"#.utf8))
        }
        #expect(throws: ConfigurationError(field: "--data-dir", problem: problem)) {
            try Configuration.load(overrides: .init(dataDir: ""), environment: [:])
        }
        #expect(throws: ConfigurationError(field: "storage.dataDir", problem: problem)) {
            try Configuration.parse(Data(#"{"storage": {"dataDir": ""}}"#.utf8), source: "config.json")
        }
    }
}
