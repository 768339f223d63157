import Crypto
import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Logging
import Storage
import TestSupport

@testable import LinkOut

/// A ledger in a temporary folder, a fresh App Store Connect key, fake production and sandbox Apple hosts,
/// and a reporting service wired to them (not started: tests drive it with `tick`).
final class ReportingHarness {
    let directory: URL
    let key: ES256Key
    let production: FakeAppleServer
    let sandbox: FakeAppleServer
    var configuration: Configuration
    let ledger: Ledger
    let service: ReportingService
    /// The service's log lines, warning and above (tests count critical lines).
    let logLines = LiveApplication.LogLines()

    init(
        graceSeconds: Int64 = 0,
        timeoutSeconds: Int64 = 2,
        clock: Clock = .system,
        /// nil: warning and above into `logLines`.
        logger: Logger? = nil,
        configure: (inout Configuration) -> Void = { _ in }
    ) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-reporting-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        key = try ES256Key.generate()
        let keyFile = directory.appendingPathComponent("AuthKey_TEST.p8")
        try Data(try key.privateKeyPEM().utf8).write(to: keyFile)
        let publicKey = try ES256Key(pem: try key.publicKeyPEM())
        production = try FakeAppleServer(publicKey: publicKey)
        sandbox = try FakeAppleServer(publicKey: publicKey)
        configuration = Configuration()
        configuration.storage.dataDir = directory.appendingPathComponent("data").path
        configuration.apple.issuerId = "57246542-96fe-1a63e053-0824d011072a"
        configuration.apple.keyId = "2X9R4HXF34"
        configuration.apple.privateKeyFile = keyFile.path
        configuration.apple.productionURL = production.baseURL
        configuration.apple.sandboxURL = sandbox.baseURL
        configuration.reporting.noLineItemAfterSeconds = graceSeconds
        configuration.reporting.requestTimeoutSeconds = timeoutSeconds
        configuration.storage.durability = "normal"
        configuration.storage.postgresURL = try TestDatabase.postgresURL(for: directory.path)
        configure(&configuration)
        ledger = try configuration.storage.openLedger()
        let lines = logLines
        service = ReportingService(
            configuration: configuration,
            ledger: ledger,
            logger: logger ?? Logger(label: "test", level: .warning, sink: .init { lines.append($0) }),
            clock: clock
        )
    }

    deinit {
        ledger.close()
        production.stop()
        sandbox.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Records a landing visit for a token.
    @discardableResult
    func record(
        _ id: String,
        type: String? = nil,
        account: String? = nil,
        created: Int64 = Clock.system.nowMilliseconds() - 60_000,
        expires: Int64? = nil,
        bundleId: BundleID = "com.example",
        into other: Ledger? = nil
    ) throws -> String {
        let ledger = other ?? self.ledger
        let fields = TokenFields(
            ExternalPurchaseToken(
                appAppleId: 1_234_567_890,
                bundleId: bundleId,
                tokenCreationDate: created,
                externalPurchaseId: ExternalPurchaseID(id),
                tokenType: type,
                tokenExpirationDate: expires
            ),
            source: account == nil ? .url : .app,
            appAccountToken: account
        )
        if account != nil {
            _ = try ledger.tokens.recordForwardedToken(
                fields,
                checkoutId: "c-\(id)",
                at: Clock.system.nowMilliseconds()
            )
        } else {
            _ = try ledger.tokens.recordVisit(
                Visit(
                    token: fields,
                    checkoutId: "c-\(id)",
                    bundleId: bundleId,
                    landingPath: "/",
                    utm: [:],
                    at: Clock.system.nowMilliseconds()
                )
            )
        }
        return id
    }

    /// Stores a one-time buy of `amount` cents (EUR, tax included at 20%) for the token.
    func addBuy(_ id: String, lineItemId: String = UUID().uuidString.lowercased(), euros: Int64 = 10) throws {
        let body = Self.buyJSON(lineItemId: lineItemId, euros: euros)
        try ledger.reports.storeLineItems(
            [(LineItemID(lineItemId), body)],
            for: ExternalPurchaseID(id),
            at: Clock.system.nowMilliseconds()
        )
    }

    /// Apple's shape of a one-time buy of `euros` (EUR, 20% tax), created a second ago.
    static func buyJSON(lineItemId: String, euros: Int64 = 10) -> String {
        """
        {"lineItemId":"\(lineItemId)","creationDate":\(Clock.system.nowMilliseconds() - 1_000),"eventType":"BUY",\
        "productType":"ONE_TIME_BUY","productIdentifier":"pro.lifetime","amountTaxInclusive":\(euros * 1200),\
        "amountTaxExclusive":\(euros * 1000),"taxAmount":\(euros * 200),"netAmountTaxExclusive":\(euros * 1000),\
        "reportingCurrency":"EUR","pricingCurrency":"EUR","taxCountry":"DEU","quantity":1}
        """
    }

    func reports(_ id: String) throws -> [StoredReport] {
        try ledger.reports.reports(for: ExternalPurchaseID(id))
    }

    /// Runs ticks at the moments the outbox asks for, until nothing is due or `limit` passes.
    func tickUntilSettled(limit: Int = 10) throws {
        for _ in 0..<limit {
            service.tick()
            let pending = try ledger.reports.reports(limit: 100, state: .pending)
            guard let next = pending.map(\.nextAttemptAt).min() else { return }
            service.tick(now: next)
        }
    }
}
