import Crypto
import Domain
import Foundation
import HTTPServer
import Lifecycle
import Logging
import Payments
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// `linkout check [--online]` against local fakes: Apple's hosts (a key it takes, a key it refuses), Stripe (its
/// key, a wrong one), a webhook receiver, and a live server as `publicURL`.
@Suite("Pre-flight check")
struct PreflightCheckTests {
    /// A live server selling through `stripe`, reporting with `apple`'s key, sending events to `receiver`.
    static func configure(
        _ configuration: inout Configuration,
        apple: LiveReportingTests.Setup,
        stripe: FakeStripeServer,
        stripeKey: String,
        receiver: WebhookReceiver
    ) {
        apple.configure(&configuration, grace: 86_400)
        configuration.apple.issuerId = "57246542-96fe-1a63-e053-0824d011072a"  // Apple's documented example
        configuration.payments.provider = .stripe
        configuration.payments[.stripe, "secretKey"] = stripeKey
        configuration.payments[.stripe, "webhookSecret"] = "whsec_check_0123456789"
        configuration.payments[.stripe, "apiBase"] = stripe.apiBase
        configuration.webhooks.url = receiver.url
        configuration.webhooks.secret = receiver.secret
        configuration.apps[0].teamId = "ABCDE12345"
        configuration.apps[0].universalLinkPaths = ["/open/*"]
    }

    static func results(_ results: [PreflightCheck.Result]) -> [String: PreflightCheck.Result] {
        Dictionary(results.map { ($0.name, $0) }) { first, _ in first }
    }

    @Test func everyOnlineCheckPassesAgainstGoodFakes() throws {
        let apple = try LiveReportingTests.Setup()
        apple.apple.checkSignatures()
        let stripe = try FakeStripeServer()
        defer { stripe.stop() }
        let receiver = try WebhookReceiver(secret: "hook-secret-0123456789")
        defer { receiver.stop() }
        let live = try LiveApplication {
            Self.configure(&$0, apple: apple, stripe: stripe, stripeKey: stripe.secretKey, receiver: receiver)
        }
        var configuration = live.application.configuration
        configuration.server.publicURL = "http://127.0.0.1:\(live.port)"
        let check = PreflightCheck(configuration: configuration)
        let online = Self.results(check.online())
        for name in ["apple production", "apple sandbox", "payment provider", "webhook receiver", "public health"] {
            #expect(online[name]?.passed == true, "\(online[name]?.line ?? name)")
        }
        #expect(online["app-site association"]?.detail.contains("ABCDE12345.com.example") == true)
        #expect(apple.apple.retrieveCount == 2)
        #expect(apple.apple.received.isEmpty, "nothing was reported")
        #expect(stripe.sessionsCreated == 0, "nothing was charged")
        #expect(receiver.deliveries.map(\.type) == ["linkout.check"])
        #expect(receiver.deliveries.first?.signatureValid == true)
        // The file names exactly the apps the server serves it for (a Team ID and universal link paths): one with
        // a Team ID alone is not looked for; one the server does not name fails, though its ID is a prefix of
        // another's.
        var teamOnly = configuration
        teamOnly.apps.append(configuration.apps[0])
        (teamOnly.apps[1].bundleId, teamOnly.apps[1].universalLinkPaths) = ("com.example.two", [])
        #expect(Self.results(PreflightCheck(configuration: teamOnly).online())["app-site association"]?.passed == true)
        var unserved = teamOnly
        (unserved.apps[1].bundleId, unserved.apps[1].universalLinkPaths) = ("com.exampl", ["/open/*"])
        let missing = Self.results(PreflightCheck(configuration: unserved).online())["app-site association"]
        #expect(missing?.passed == false && missing?.detail.contains("ABCDE12345.com.exampl") == true)
        // Apple's proxy is for Apple's API: the receiver and the public address are reached as the server and
        // phones reach them.
        var proxied = configuration
        proxied.apple.proxy = "http://127.0.0.1:9"
        let throughProxy = Self.results(PreflightCheck(configuration: proxied).online())
        #expect(throughProxy["apple production"]?.passed == false)
        #expect(throughProxy["apple production"]?.detail.contains("apple.proxy") == true)
        #expect(throughProxy["webhook receiver"]?.passed == true, "\(throughProxy["webhook receiver"]?.line ?? "")")
        #expect(throughProxy["public health"]?.passed == true, "\(throughProxy["public health"]?.line ?? "")")
        let offline = Self.results(check.offline())
        for name in ["apple key", "apps", "catalog", "commission regimes", "payments", "ledger"] {
            #expect(offline[name]?.passed == true, "\(offline[name]?.line ?? name)")
        }
        // A test server has a plain-http address; production needs https, here and for the receiver.
        #expect(offline["public URL"]?.passed == false)
        configuration.server.publicURL = "https://pay.example.com"
        configuration.webhooks.url = "https://hooks.example.com/linkout"
        let https = Self.results(PreflightCheck(configuration: configuration).offline())
        #expect(https["public URL"]?.passed == true && https["webhooks"]?.passed == true)
        // Apple's hosts and the provider's API over plain http only to this machine (the fakes here).
        #expect(https["api addresses"]?.passed == true, "\(https["api addresses"]?.line ?? "")")
        var clear = configuration
        clear.apple.productionURL = "http://api.storekit.apple.com"
        clear.payments[.stripe, "apiBase"] = "http://api.stripe.com"
        let inClear = PreflightCheck(configuration: clear).apiAddresses()
        #expect(
            !inClear.passed && inClear.detail.contains("apple.productionURL, payments.stripe.apiBase not https"),
            "\(inClear.line)"
        )
        // Apple's hosts swapped, or one host for both: production tokens would go to the sandbox.
        var swapped = configuration
        swapped.apple.productionURL = "https://API.storekit-sandbox.apple.com/"
        let toSandbox = PreflightCheck(configuration: swapped).apiAddresses()
        #expect(!toSandbox.passed && toSandbox.detail.contains("apple.productionURL names Apple's sandbox host"))
        swapped.apple.productionURL = "https://api.storekit.apple.com"
        swapped.apple.sandboxURL = "https://api.storekit.apple.com"
        #expect(
            PreflightCheck(configuration: swapped).apiAddresses().detail.contains("sandboxURL names Apple's production")
        )
        #expect(
            PreflightCheck.swappedAppleHost(production: "https://a.example", sandbox: "https://a.example:443/") != nil
        )
        // A gateway of one's own routing both by path is no mistake; the older `itunes` hosts swapped are.
        #expect(
            PreflightCheck.swappedAppleHost(production: "https://gw.example/prod", sandbox: "https://gw.example/sb")
                == nil
        )
        #expect(
            PreflightCheck.swappedAppleHost(
                production: "https://api.storekit-sandbox.itunes.apple.com",
                sandbox: "https://api.storekit-sandbox.apple.com"
            ) != nil
        )
        #expect(
            PreflightCheck.swappedAppleHost(
                production: "https://api.storekit.apple.com",
                sandbox: "https://api.storekit-sandbox.apple.com"
            ) == nil
        )
        // This machine however spelled is a fake's address; another host behind a user part is not; an empty
        // apiBase is the provider's https default.
        for local in ["http://127.0.0.2:9", "http://[::1]:9", "http://[::ffff:127.0.0.1]:9", "http://LOCALHOST:9"] {
            #expect(PreflightCheck.isHTTPSOrLoopback(local), "\(local)")
        }
        for remote in [
            "http://127.0.0.1:x@example.com/", "http://localhost:80@example.com", "http://127.0.0.1.example.com",
        ] {
            #expect(!PreflightCheck.isHTTPSOrLoopback(remote), "\(remote)")
        }
        clear.apple.productionURL = "HTTPS://api.storekit.apple.com"
        clear.payments[.stripe, "apiBase"] = ""
        #expect(PreflightCheck(configuration: clear).apiAddresses().passed)
        // A receiver's basic auth, key or secret path in its URL is never printed.
        configuration.webhooks.url = "https://hookuser:HOOKPASS@hooks.example.com/linkout?apikey=QUERYSECRET"
        let line = try #require(Self.results(PreflightCheck(configuration: configuration).offline())["webhooks"])
        #expect(line.passed)
        #expect(line.detail == "https://hooks.example.com/…")
        configuration.webhooks.url = "https://hooks.example.com"
        #expect(
            Self.results(PreflightCheck(configuration: configuration).offline())["webhooks"]?.detail
                == "https://hooks.example.com"
        )
    }

    /// The admin and API tokens may not be the same (the backend's token would open `/admin`); a short one is told
    /// how to make a long one.
    @Test func theAdminAndAPITokensDifferAndAShortOneIsTold() throws {
        var configuration = Configuration()
        #expect(PreflightCheck(configuration: configuration).accessTokens().passed)
        configuration.adminToken = String(repeating: "a", count: 32)
        configuration.apiToken = configuration.adminToken
        let same = PreflightCheck(configuration: configuration).accessTokens()
        #expect(!same.passed && same.detail.contains("are the same"), "\(same.line)")
        configuration.apiToken = "short"
        let short = PreflightCheck(configuration: configuration).accessTokens()
        #expect(short.passed && short.detail.contains("LINKOUT_API_TOKEN shorter than 16"), "\(short.line)")
        #expect(!short.detail.contains("LINKOUT_ADMIN_TOKEN shorter"))
    }

    @Test func aRefusedKeyAWrongProviderKeyAndADeadReceiverFail() throws {
        let apple = try LiveReportingTests.Setup()
        apple.apple.checkSignatures()
        let stripe = try FakeStripeServer()
        defer { stripe.stop() }
        let receiver = try WebhookReceiver(secret: "hook-secret-0123456789", failFirst: 1)
        defer { receiver.stop() }
        let live = try LiveApplication {
            Self.configure(&$0, apple: apple, stripe: stripe, stripeKey: "sk_test_wrong_key_000000", receiver: receiver)
        }
        var configuration = live.application.configuration
        configuration.server.publicURL = "http://127.0.0.1:\(live.port)"
        // Another key than the one Apple knows: App Store Connect's refusal is a 401.
        let other = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-other-\(UUID()).p8")
        defer { try? FileManager.default.removeItem(at: other) }
        try Data(try ES256Key.generate().privateKeyPEM().utf8).write(to: other)
        configuration.apple.privateKeyFile = other.path
        let online = Self.results(PreflightCheck(configuration: configuration).online())
        #expect(online["apple production"]?.passed == false)
        #expect(online["apple production"]?.detail.contains("401") == true)
        #expect(online["payment provider"]?.passed == false)
        #expect(online["payment provider"]?.detail.contains("check payments.stripe.secretKey") == true)
        #expect(online["payment provider"]?.detail.contains("sk_test_wrong") == false, "the key is never printed")
        #expect(online["webhook receiver"]?.passed == false)
        configuration.server.publicURL = "http://127.0.0.1:9"
        #expect(Self.results(PreflightCheck(configuration: configuration).online())["public health"]?.passed == false)
        // A server that is not Apple's answers 404 too (here linkout itself): that proves nothing about the key.
        configuration.apple.productionURL = "http://127.0.0.1:\(live.port)"
        let notApple = try #require(
            Self.results(PreflightCheck(configuration: configuration).online())["apple production"]
        )
        #expect(!notApple.passed && notApple.detail.contains("not Apple's"), "\(notApple.line)")
        // Offline: a key file that is not a key, an app without a way back, a product missing a currency.
        try Data("not a key".utf8).write(to: other)
        configuration.apps[0].returnURL = nil
        configuration.apps[0].urlScheme = nil
        configuration.catalog[1].prices["EUR"] = nil
        let offline = Self.results(PreflightCheck(configuration: configuration).offline())
        #expect(offline["apple key"]?.passed == false)
        #expect(offline["apps"]?.passed == false)
        #expect(offline["catalog"]?.detail.contains("has no price in EUR") == true)
        // Nothing to sell, and a data folder that is a file, fail too.
        configuration.catalog = []
        configuration.apiToken = nil
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-file-\(UUID())")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data("x".utf8).write(to: file)
        configuration.storage.dataDir = file.path
        configuration.storage.postgresURL = nil  // the PostgreSQL tier runs this test too
        let empty = Self.results(PreflightCheck(configuration: configuration).offline())
        #expect(empty["catalog"]?.passed == false)
        configuration.apiToken = "backend-secret-0123456789"
        let backendSells = Self.results(PreflightCheck(configuration: configuration).offline())
        #expect(backendSells["catalog"]?.passed == true, "the backend reports its own sales")
        #expect(empty["data folder"]?.detail.contains("is a file") == true, "\(empty["data folder"]?.line ?? "")")
    }

    @Test func paddlesKeyIsCheckedWithAHarmlessRead() throws {
        let paddle = try FakePaddleServer()
        defer { paddle.stop() }
        var configuration = Configuration()
        configuration.payments.provider = .paddle
        configuration.payments[.paddle, "apiKey"] = paddle.apiKey
        configuration.payments[.paddle, "webhookSecret"] = PaddleFlowTests.secret
        configuration.payments[.paddle, "apiBase"] = paddle.apiBase
        configuration.payments[.paddle, "checkoutURL"] = PaddleFlowTests.hostedCheckout
        let good = PreflightCheck(configuration: configuration).paymentProvider()
        #expect(good.passed && good.detail.contains("listed the event types"), "\(good.line)")
        configuration.payments[.paddle, "apiKey"] = "pdl_sdbx_apikey_01wrongkey_0000000000000000"
        #expect(!PreflightCheck(configuration: configuration).paymentProvider().passed)
    }

    /// A 2xx that is not the provider's answer (a proxy's page, an `apiBase` pointing at some web site) proves
    /// nothing of the key: Stripe's balance object and Paddle's list are looked for; nor does another site's 200
    /// at `publicURL/healthz` show linkout answers there.
    @Test func aPageThatIsNotTheProvidersAnswerFails() throws {
        var router = Router()
        for path in ["/v1/balance", "/event-types", "/healthz"] {
            router.get(path) { _ in
                HTTPResponse(
                    status: .ok,
                    headers: ["Content-Type": "text/html"],
                    body: Array("<html>hello</html>".utf8)
                )
            }
        }
        var settings = HTTPServer.Configuration()
        (settings.host, settings.port, settings.eventLoopCount, settings.workerThreads) = ("127.0.0.1", 0, 1, 2)
        let site = HTTPServer(configuration: settings, router: router, logger: Logger(label: "site", level: .critical))
        let port = try site.start()
        defer { site.shutdown(gracePeriod: .seconds(1)) }
        var stripe = Configuration()
        stripe.payments.provider = .stripe
        stripe.payments[.stripe, "secretKey"] = "sk_test_any"
        stripe.payments[.stripe, "webhookSecret"] = "whsec_any"
        stripe.payments[.stripe, "apiBase"] = "http://127.0.0.1:\(port)"
        let notStripe = PreflightCheck(configuration: stripe).paymentProvider()
        #expect(!notStripe.passed && notStripe.detail.contains("without Stripe's balance"), "\(notStripe.line)")
        var paddle = Configuration()
        paddle.payments.provider = .paddle
        paddle.payments[.paddle, "apiKey"] = "pdl_sdbx_apikey_01anykey_000000000000000000"
        paddle.payments[.paddle, "webhookSecret"] = PaddleFlowTests.secret
        paddle.payments[.paddle, "apiBase"] = "http://127.0.0.1:\(port)"
        paddle.payments[.paddle, "checkoutURL"] = PaddleFlowTests.hostedCheckout
        let notPaddle = PreflightCheck(configuration: paddle).paymentProvider()
        #expect(!notPaddle.passed && notPaddle.detail.contains("without Paddle's event types"), "\(notPaddle.line)")
        // So is a publicURL where some other site answers 200.
        paddle.server.publicURL = "http://127.0.0.1:\(port)"
        let notLinkout = PreflightCheck(configuration: paddle).health()
        #expect(!notLinkout.passed && notLinkout.detail.contains("not linkout's ok"), "\(notLinkout.line)")
    }

    /// A data folder on a disk nearly full (less than a journal segment free) fails: every landing would soon be
    /// answered 503. One with room for landings but not for the journal's segment made ahead passes, saying so.
    @Test func aDataFolderOnAFullDiskFails() throws {
        for (size, passes, detail) in [
            (1 << 20, false, "is writable, on a disk with 1 MB free: landings are answered 503"),
            (40 << 20, true, "is writable (40 MB free: below 72 MB the journal makes no segment ahead"),
        ] {
            let disk = try SmallFilesystem(bytes: size)
            defer { disk.unmount() }
            var configuration = Configuration()
            configuration.storage.postgresURL = nil
            configuration.storage.dataDir = disk.path
            let line = Self.results(PreflightCheck(configuration: configuration).offline())["data folder"]
            #expect(line?.passed == passes && line?.detail.contains(detail) == true, "\(line?.line ?? "")")
        }
    }

    @Test func theCommandPrintsALinePerCheckAndExits1UnlessAllPass() throws {
        let process = try LinkOutProcess(["check"], directory: LiveApplication.repositoryRoot)
        #expect(process.waitForExit() == 1)
        let output = process.stdoutText()
        #expect(output.contains("FAIL payments: payments.provider is demo"))
        #expect(output.contains("ok   catalog:"))
        #expect(output.contains("13 checks:"))
        #expect(output.contains("ok   access tokens:"))
        #expect(output.contains("ok   api addresses:"))
        #expect(output.contains("ok   server files:"))
        // A mistyped data folder fails the check, and the check makes no ledger there.
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-nowhere-\(UUID())")
        let mistyped = try LinkOutProcess(
            ["check", "--data-dir", missing.path],
            directory: LiveApplication.repositoryRoot
        )
        #expect(mistyped.waitForExit() == 1)
        #expect(mistyped.stdoutText().contains("FAIL ledger: no ledger at"))
        #expect(mistyped.stdoutText().contains("\(missing.path) does not exist yet"), "\(mistyped.stdoutText())")
        #expect(!FileManager.default.fileExists(atPath: missing.path))
        // An empty ledger file is none yet (the server makes one in it); a damaged one stops the server.
        defer { try? FileManager.default.removeItem(at: missing) }
        try FileManager.default.createDirectory(at: missing, withIntermediateDirectories: true)
        let file = missing.appendingPathComponent("linkout.sqlite").path
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        func ledgerLine() throws -> String {
            let check = try LinkOutProcess(
                ["check", "--data-dir", missing.path],
                directory: LiveApplication.repositoryRoot
            )
            _ = check.waitForExit()
            return check.stdoutText().split(separator: "\n").first { $0.contains(" ledger: ") }.map(String.init) ?? ""
        }
        let empty = try ledgerLine()
        #expect(
            empty.contains("FAIL ledger: no ledger in") && empty.contains("makes it on its first start"),
            "\(empty)"
        )
        #expect(FileManager.default.createFile(atPath: file, contents: Data(repeating: 0x41, count: 8192)))
        let damaged = try ledgerLine()
        #expect(damaged.contains("FAIL ledger:") && damaged.contains("the server cannot start on it"), "\(damaged)")
        // A pipe where the ledger would be: said at once (opening it waited for ever).
        try FileManager.default.removeItem(atPath: file)
        #expect(mkfifo(file, 0o600) == 0)
        let pipe = try ledgerLine()
        #expect(pipe.contains("is not a file"), "\(pipe)")
    }

    /// A key file whose key the ledger retired stops `serve` at its start: the check's ledger line fails with it.
    @Test func aKeyFileWhoseKeyWasRetiredFailsTheCheck() throws {
        let folder = try AppEntitlementTests.keyFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (file, _) = try AppEntitlementTests.keyFiles(in: folder)
        let live = try LiveApplication { $0.appEntitlements.signingKeyFile = file.path }
        var configuration = live.application.configuration
        #expect(PreflightCheck(configuration: configuration).ledger().passed)
        let kid = try EntitlementKey.publicJWK(of: EntitlementKeyring.readKeyFile(file.path)).kid
        #expect(try live.ledger().signingKeys.retire(kid: kid, at: Lifecycle.Clock.system.nowMilliseconds()))
        let refused = PreflightCheck(configuration: configuration).ledger()
        #expect(!refused.passed && refused.detail.contains("\(kid), which was retired"), "\(refused.line)")
        configuration.appEntitlements.signingKeyFile = ""
        #expect(PreflightCheck(configuration: configuration).ledger().passed)
    }

    /// What `serve` would refuse at its start fails the check too: a public address no phone reaches, an address
    /// this machine does not have or another process serves, a public folder without the pages, a missing key.
    @Test func whatTheServerWouldRefuseFailsTheCheck() throws {
        var configuration = Configuration()
        configuration.server.publicDir = LiveApplication.repositoryRoot.appendingPathComponent("Public").path
        for unreachable in [
            "https://localhost", "https://LOCALHOST:8443", "https://127.0.0.1", "https://[::1]", "https://0.0.0.0",
            "https://10.0.0.5", "https://172.20.1.1", "https://192.168.1.10", "https://pay.local", "https://[fd00::1]",
            "https://100.64.0.1", "https://[::ffff:10.0.0.1]", "https://[::ffff:7f00:1]", "https://127.1",
            "https://2130706433", "https://0x7f000001", "https://0177.0.0.1", "https://localhost.",
            "https://printer.local.", "https://10.0.0.1.", "https://224.0.0.1", "https://255.255.255.255",
            "http://127.0.0.1:8080",
        ] {
            configuration.server.publicURL = unreachable
            #expect(!PreflightCheck(configuration: configuration).publicURL().passed, "\(unreachable)")
        }
        for reachable in ["https://pay.example.com", "https://172.32.0.1", "https://8.8.8.8"] {
            configuration.server.publicURL = reachable
            #expect(PreflightCheck(configuration: configuration).publicURL().passed, "\(reachable)")
        }

        // A port linkout serves is the running server's (the check is run next to it too); another's fails.
        let live = try LiveApplication()
        configuration.server.host = "127.0.0.1"
        configuration.server.port = live.port
        if live.application.configuration.storage.postgresURL == nil {
            configuration.storage.dataDir = "/nonexistent/linkout-data"
            #expect(!PreflightCheck(configuration: configuration).serverAddress().passed, "a server of another folder")
        }
        configuration.storage = live.application.configuration.storage
        let served = PreflightCheck(configuration: configuration).serverAddress()
        #expect(served.passed && served.detail.contains("served by a running server"), "\(served.line)")
        let other = try FakeStripeServer()
        defer { other.stop() }
        configuration.server.port = other.port
        let inUse = PreflightCheck(configuration: configuration).serverAddress()
        #expect(!inUse.passed && inUse.detail.contains("is in use by another process"), "\(inUse.line)")
        configuration.server.port = 0
        if configuration.storage.postgresURL == nil {
            // Free, but this data folder is served on another port: `serve` would refuse a second server on it.
            let elsewhere = PreflightCheck(configuration: configuration).serverAddress()
            #expect(!elsewhere.passed && elsewhere.detail.contains("already serves"), "\(elsewhere.line)")
            configuration.storage.dataDir = "/nonexistent/linkout-data"
        }
        #expect(PreflightCheck(configuration: configuration).serverAddress().passed)
        configuration.server.host = "999.1.1.1"
        let notHere = PreflightCheck(configuration: configuration).serverAddress()
        #expect(!notHere.passed && notHere.detail.contains("\"999.1.1.1\""), "\(notHere.line)")
        // A value put in the wrong field (a secret pasted as the host) is not shown back.
        configuration.server.host = "sk_live_pasted_here"
        let pasted = PreflightCheck(configuration: configuration).serverAddress()
        #expect(!pasted.passed && !pasted.line.contains("sk_live_pasted_here"), "\(pasted.line)")
        configuration.server.host = "999.1.1.1"

        #expect(PreflightCheck(configuration: configuration).serverFiles().passed)
        configuration.appEntitlements.signingKeyFile = "/nonexistent/linkout-signing.pem"
        let noKey = PreflightCheck(configuration: configuration).serverFiles()
        #expect(!noKey.passed && noKey.detail.contains("appEntitlements.signingKeyFile"), "\(noKey.line)")
        configuration.appEntitlements.signingKeyFile = ""
        configuration.apple.notificationRootCertificates = ["/nonexistent/root.pem"]
        #expect(!PreflightCheck(configuration: configuration).serverFiles().passed)
        configuration.apple.notificationRootCertificates = []
        configuration.server.publicDir = "/nonexistent/public"
        let noPages = PreflightCheck(configuration: configuration).serverFiles()
        #expect(!noPages.passed && noPages.detail.contains("server.publicDir"), "\(noPages.line)")
    }
}
