import Domain
import ExternalPurchase
import Foundation
import HTTPServer
import Lifecycle
import Logging
import Storage
import Testing

@testable import LinkOut

/// The reporting service against fake Apple hosts, through the real libcurl client.
@Suite("Reporting to Apple")
struct ReportingTests {
    @Test func everyQuietTokenGetsExactlyOneNoLineItemReport() throws {
        let harness = try ReportingHarness()
        for index in 0..<5 { try harness.record("token-\(index)") }
        try harness.tickUntilSettled()
        harness.service.tick()
        let received = harness.production.received
        #expect(received.count == 5)
        #expect(Set(received.compactMap { $0.report?.externalPurchaseId }) == Set((0..<5).map { "token-\($0)" }))
        for request in received {
            #expect(request.signatureValid)
            #expect(request.report?.status == .noLineItem)
            #expect(request.bodyObject?["lineItems"] == nil)
            #expect(request.problems == [])
        }
        let summary = try harness.ledger.reports.reportSummary()
        #expect(summary.counts[.accepted] == 5)
        #expect(summary.oldestUnreported == nil)
    }

    @Test func tokensWithinTheGracePeriodWait() throws {
        let harness = try ReportingHarness(graceSeconds: 3600)
        try harness.record("recent")
        harness.service.tick()
        #expect(harness.production.received.isEmpty)
        #expect(try harness.reports("recent").isEmpty)
    }

    @Test func aRetryReusesTheRequestIdentifierAndTheBytes() throws {
        let harness = try ReportingHarness()
        try harness.record("retry")
        harness.production.enqueue(.respond(status: 500), .respond(status: 503))
        try harness.tickUntilSettled()
        let received = harness.production.received
        #expect(received.count == 3)
        #expect(Set(received.compactMap { $0.report?.requestIdentifier }).count == 1)
        #expect(Set(received.map(\.body)).count == 1)
        let report = try #require(try harness.reports("retry").first)
        #expect(report.state == .accepted)
        #expect(report.attempts == 3)
        #expect(try harness.reports("retry").count == 1)
    }

    @Test func a400IsNotResentUnchangedButIsResentWhenTheDataChanges() throws {
        let harness = try ReportingHarness()
        try harness.record("refused")
        let errors = #"{"errors":[{"errorCode":4000023,"errorMessage":"bad","fieldName":"status"}]}"#
        harness.production.enqueue(.respond(status: 400, body: errors))
        harness.service.tick()
        harness.service.tick(now: Clock.system.nowMilliseconds() + 86_400_000)
        #expect(harness.production.received.count == 1)
        let rejected = try #require(try harness.reports("refused").first)
        #expect(rejected.state == .rejected)
        #expect(rejected.lastHTTPStatus == 400)
        #expect(rejected.lastResponse == errors)

        try harness.addBuy("refused")
        try harness.tickUntilSettled()
        let received = harness.production.received
        #expect(received.count == 2)
        #expect(received[1].report?.requestIdentifier == rejected.requestIdentifier)
        #expect(received[1].report?.status == .lineItem)
        #expect(received[1].report?.lineItems?.count == 1)
        #expect(try harness.reports("refused").map(\.state) == [.accepted])
    }

    @Test func newLineItemsAfterAnAcceptedReportMakeANewReport() throws {
        let harness = try ReportingHarness(graceSeconds: 3600)
        try harness.record("buyer")
        try harness.addBuy("buyer")
        try harness.tickUntilSettled()
        try harness.addBuy("buyer", euros: 20)
        try harness.tickUntilSettled()
        let received = harness.production.received
        #expect(received.count == 2)
        #expect(received.allSatisfy { $0.report?.status == .lineItem && $0.report?.lineItems?.count == 1 })
        #expect(Set(received.compactMap { $0.report?.requestIdentifier }).count == 2)
        #expect(received.allSatisfy { $0.problems.isEmpty && $0.signatureValid })
    }

    @Test func aRestartWithAReportInFlightNeitherLosesNorDoublesIt() throws {
        let harness = try ReportingHarness(timeoutSeconds: 1)
        try harness.record("in-flight")
        // The first send hangs past the client's timeout: the report stays in the outbox, as after a crash.
        harness.production.enqueue(.hang(milliseconds: 2_500))
        harness.service.tick()
        let first = try #require(try harness.reports("in-flight").first)
        #expect(first.state == .pending)
        // A new service on a reopened ledger (the restarted process) picks the same report up.
        harness.ledger.close()
        let reopened = try harness.configuration.storage.openLedger()
        defer { reopened.close() }
        let restarted = ReportingService(
            configuration: harness.configuration,
            ledger: reopened,
            logger: .init(label: "t", level: .critical)
        )
        restarted.tick(now: first.nextAttemptAt)
        #expect(harness.production.waitForRequest())
        #expect(harness.production.waitForRequest())
        let reports = try reopened.reports.reports(for: "in-flight")
        #expect(reports.count == 1)
        #expect(reports.first?.state == .accepted)
        #expect(reports.first?.requestIdentifier == first.requestIdentifier)
        let identifiers = harness.production.received.compactMap { $0.report?.requestIdentifier }
        #expect(identifiers == [first.requestIdentifier, first.requestIdentifier])
    }

    @Test func sandboxAndProductionGoToTheirOwnHosts() throws {
        let harness = try ReportingHarness()
        try harness.record("00000000-0000-0000-0000-000000000000")
        try harness.record("SANDBOX_00000000-0000-0000-0000-000000000000")
        try harness.tickUntilSettled()
        #expect(
            harness.production.received.compactMap { $0.report?.externalPurchaseId } == [
                "00000000-0000-0000-0000-000000000000"
            ]
        )
        #expect(
            harness.sandbox.received.compactMap { $0.report?.externalPurchaseId } == [
                "SANDBOX_00000000-0000-0000-0000-000000000000"
            ]
        )
    }

    @Test func aHangingServerTimesOutAndIsRetried() throws {
        let harness = try ReportingHarness(timeoutSeconds: 1)
        try harness.record("slow")
        harness.production.enqueue(.hang(milliseconds: 5_000))
        let started = Date()
        harness.service.tick()
        #expect(Date().timeIntervalSince(started) < 4)  // gave up at the 1 s timeout, not after the hang
        let waiting = try #require(try harness.reports("slow").first)
        #expect(waiting.state == .pending)
        #expect(waiting.lastHTTPStatus == nil)
        #expect(
            waiting.lastResponse?.contains("timed out") == true || waiting.lastResponse?.contains("Timeout") == true
        )
        #expect(waiting.nextAttemptAt > Clock.system.nowMilliseconds())
        #expect(harness.production.waitForRequest())  // the hung call finishes on the fake's side
        harness.service.tick(now: waiting.nextAttemptAt)
        let settled = try #require(try harness.reports("slow").first)
        #expect(settled.state == .accepted)
        #expect(settled.requestIdentifier == waiting.requestIdentifier)
    }

    @Test func a401BlocksSendingAndSaysSo() throws {
        let harness = try ReportingHarness()
        try harness.record("a")
        try harness.record("b")
        harness.production.enqueue(.respond(status: 401), .respond(status: 401))
        harness.service.tick()
        #expect(harness.production.received.count == 1)
        guard let block = harness.service.status.blocks.first, block.reason == .unauthorized else {
            Issue.record("expected the service to block, got \(harness.service.status)")
            return
        }
        // A day later one report probes, and only one: Apple refuses us once, not once per report.
        let later = Clock.system.nowMilliseconds() + 86_400_000
        harness.service.tick(now: later)
        harness.service.tick(now: later)
        #expect(harness.production.received.count == 2)
        #expect(try harness.ledger.reports.reports(limit: 10, state: .pending).count == 2)
        let readiness = String(
            decoding: Readiness(ledger: harness.ledger, reporting: harness.service, clock: .system).response().body,
            as: UTF8.self
        )
        #expect(readiness.hasPrefix("ready\n"))
        #expect(readiness.contains("reporting: BLOCKED since"))
        #expect(readiness.contains("Apple answered 401"))
    }

    @Test func a429HonoursRetryAfterAndOtherwisePausesAMinute() throws {
        let harness = try ReportingHarness()
        try harness.record("limited")
        let retryAt = Clock.system.nowMilliseconds() + 120_000
        harness.production.enqueue(.respond(status: 429, headers: ["Retry-After": String(retryAt)]))
        harness.service.tick()
        #expect(try harness.reports("limited").first?.nextAttemptAt == retryAt)
        harness.service.tick(now: retryAt - 1)
        #expect(harness.production.received.count == 1)

        harness.production.enqueue(.respond(status: 429))
        let before = Clock.system.nowMilliseconds()
        harness.service.tick(now: retryAt)
        let backedOff = try #require(try harness.reports("limited").first)
        #expect(backedOff.state == .pending)
        #expect(backedOff.nextAttemptAt >= before + AppleAnswer.rateLimitPause)
        harness.service.tick(now: backedOff.nextAttemptAt)
        #expect(try harness.reports("limited").first?.state == .accepted)
        #expect(harness.production.received.count == 3)
    }

    /// An item dated a few minutes ahead of the clock, within the validator's grace (a provider's clock a little
    /// ahead), is not sent before its date: Apple refuses a date in its future (`FutureDateError`).
    @Test func anItemDatedMinutesAheadWaitsForItsDate() throws {
        let harness = try ReportingHarness()
        let now = Clock.system.nowMilliseconds()
        _ = try harness.record("ahead", created: now - 3_600_000)
        let date = now + 2 * 60_000
        try harness.ledger.reports.storeLineItems(
            [("li-ahead", MonthlyCloseTests.buy("li-ahead", at: date))],
            for: "ahead",
            at: now
        )
        harness.service.tick(now: now)
        harness.service.tick(now: date - 1)
        #expect(harness.production.received.isEmpty)
        #expect(try harness.ledger.reports.attentionCount() == 0)
        harness.service.tick(now: date)
        #expect(
            harness.production.received.compactMap(\.report).first?.lineItems?.map(\.common.lineItemId) == ["li-ahead"]
        )
    }

    /// Apple's pause outlives a restart: a server started again within it (a deploy, a crash loop) waits it out
    /// instead of sending at once what Apple asked us to hold.
    @Test func a429PauseSurvivesARestart() throws {
        let harness = try ReportingHarness()
        try harness.record("limited")
        let retryAt = Clock.system.nowMilliseconds() + 120_000
        harness.production.enqueue(.respond(status: 429, headers: ["Retry-After": String(retryAt)]))
        harness.service.tick()
        #expect(harness.production.received.count == 1)

        let restarted = ReportingService(
            configuration: harness.configuration,
            ledger: harness.ledger,
            logger: Logger(label: "test", level: .warning, sink: .init { _ in })
        )
        #expect(restarted.rateLimitedUntil(now: Clock.system.nowMilliseconds()) == retryAt)
        #expect(restarted.pauseLine(now: retryAt - 1)?.contains(ReportingBlock.timestamp(retryAt)) == true)
        #expect(restarted.pauseLine(now: retryAt) == nil)
        // One started without usable credentials (a key loaded later, `linkout report status` without it) knows
        // the pause too.
        var keyless = harness.configuration
        keyless.apple.privateKeyFile = harness.directory.appendingPathComponent("missing.p8").path
        let waiting = ReportingService(
            configuration: keyless,
            ledger: harness.ledger,
            logger: Logger(label: "test", level: .critical)
        )
        #expect(waiting.rateLimitedUntil(now: Clock.system.nowMilliseconds()) == retryAt)
        restarted.tick(now: retryAt - 1)
        #expect(harness.production.received.count == 1)
        restarted.tick(now: retryAt)
        #expect(harness.production.received.count == 2)
        #expect(try harness.reports("limited").first?.state == .accepted)
    }

    /// The statuses the fake Apple received, by token.
    static func statuses(_ server: FakeAppleServer) -> [String: ReportStatus] {
        var statuses: [String: ReportStatus] = [:]
        for request in server.received {
            if let report = request.report { statuses[report.externalPurchaseId.rawValue] = report.status }
        }
        return statuses
    }

    /// A line item that reached the ledger without the check at its making (stored directly, as an older
    /// release or a restore may have left it) and breaks Apple's rules is set aside by the planner with the
    /// rule and the action; the token's other items go to Apple on the next pass.
    @Test func thePlannerSetsAsideAnItemAppleWouldRefuseAndReportsTheRest() throws {
        let harness = try ReportingHarness()
        let now = Clock.system.nowMilliseconds()
        let created = now - 3 * 86_400_000
        _ = try harness.record("custom", type: "SERVICES", created: created, expires: now + 86_400_000)
        try harness.ledger.reports.storeLineItems(
            [
                ("li-in-range", MonthlyCloseTests.buy("li-in-range", at: created + 60_000)),
                ("li-before", MonthlyCloseTests.buy("li-before", at: created - 86_400_000)),
            ],
            for: "custom",
            at: now
        )
        try harness.tickUntilSettled()
        let sent = harness.production.received.compactMap(\.report)
        #expect(sent.count == 1)
        #expect(sent.first?.lineItems?.map(\.common.lineItemId) == ["li-in-range"])
        #expect(harness.production.received.allSatisfy { $0.problems.isEmpty })
        let aside = try #require(
            try harness.ledger.reports.lineItems(for: "custom").first { $0.lineItemId == "li-before" }
        )
        #expect(aside.needsCorrection)
        #expect(aside.correction?.contains("LineItemCreationDateOutOfRangeError") == true)
        #expect(aside.correction?.contains("linkout report retract custom li-before") == true)
        #expect(try harness.ledger.reports.needingAttention(limit: 10).map(\.externalPurchaseId) == ["custom"])
    }

    /// A token whose only line item was set aside, then dropped by the operator, is reported as a token without
    /// line items: it never stays unreported (before, the dropped row kept it out of `NO_LINE_ITEM` for good).
    @Test func aTokenWhoseOnlyItemWasSetAsideAndDroppedIsReportedWithoutLineItems() throws {
        let harness = try ReportingHarness()
        let now = Clock.system.nowMilliseconds()
        _ = try harness.record("alone", created: now - 3 * 86_400_000)
        try harness.ledger.reports.storeLineItems(
            // Two days ahead: past the day an item dated ahead of the clock waits for its date.
            [("li-future", MonthlyCloseTests.buy("li-future", at: now + 2 * 86_400_000))],
            for: "alone",
            at: now
        )
        try harness.tickUntilSettled()
        #expect(harness.production.received.isEmpty)
        #expect(try harness.ledger.reports.needingAttention(limit: 10).map(\.externalPurchaseId) == ["alone"])
        _ = try ReportActions(ledger: harness.ledger).retract("alone", lineItemId: "li-future")
        #expect(try harness.ledger.reports.attentionCount() == 0)
        try harness.tickUntilSettled()
        #expect(Self.statuses(harness.production) == ["alone": .noLineItem])
        let close = try harness.ledger.monthlyClose.tokenCounts(
            environment: .production,
            from: now - 30 * 86_400_000,
            until: now + 1,
            at: .init(now: now, quietSince: now)
        )
        #expect(close.outstanding.isEmpty)
    }

    @Test func extraCustomLinkTokensOfOneCustomerAreReportedAsDuplicates() throws {
        let harness = try ReportingHarness()
        let account = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        let now = Clock.system.nowMilliseconds()
        let expires = now + 3_600_000
        try harness.record("first", type: "SERVICES", account: account, created: now - 10_000, expires: expires)
        try harness.record("second", type: "SERVICES", account: account, created: now - 5_000, expires: expires)
        try harness.record("other-type", type: "ACQUISITION", account: account, created: now - 5_000, expires: expires)
        try harness.tickUntilSettled()
        // The duplicate goes at once; the tokens kept for transactions wait while they are active.
        #expect(Self.statuses(harness.production) == ["second": .duplicateToken])
        harness.service.tick(now: expires + 1)
        #expect(
            Self.statuses(harness.production) == [
                "first": .noLineItem, "second": .duplicateToken, "other-type": .noLineItem,
            ]
        )
        // The fake checks without the token, so it cannot judge DUPLICATE_TOKEN; the rest it can.
        #expect(
            harness.production.received.filter { $0.report?.status != .duplicateToken }.allSatisfy {
                $0.problems.isEmpty
            }
        )
    }

    @Test func anActiveCustomLinkTokenWaitsForItsExpiryBeforeNoLineItem() throws {
        let harness = try ReportingHarness(graceSeconds: 172_800)
        let now = Clock.system.nowMilliseconds()
        let expires = now + 30 * 86_400_000
        // Created three days ago: past the 48-hour wait that link-out tokens get.
        try harness.record("custom", type: "ACQUISITION", created: now - 3 * 86_400_000, expires: expires)
        harness.service.tick()
        harness.service.tick(now: expires - 1)
        #expect(harness.production.received.isEmpty)
        #expect(try harness.reports("custom").isEmpty)
        harness.service.tick(now: expires)
        harness.service.tick(now: expires + 86_400_000)
        #expect(harness.production.received.map { $0.report?.status } == [.noLineItem])
        #expect(harness.production.received.first?.problems == [])
    }

    @Test func anActiveCustomLinkTokenIsReportedAsSoonAsItHasLineItems() throws {
        let harness = try ReportingHarness(graceSeconds: 172_800)
        let now = Clock.system.nowMilliseconds()
        let expires = now + 30 * 86_400_000
        try harness.record("buyer", type: "SERVICES", created: now - 3 * 86_400_000, expires: expires)
        harness.service.tick()
        #expect(harness.production.received.isEmpty)
        try harness.addBuy("buyer")
        harness.service.tick()
        #expect(harness.production.received.map { $0.report?.status } == [.lineItem])
        // Expiry changes nothing for a token reported with its purchase.
        harness.service.tick(now: expires + 86_400_000)
        #expect(harness.production.received.count == 1)
    }

    @Test func aCustomLinkTypeWithoutAnExpiryIsReportedLikeALinkOutToken() throws {
        let harness = try ReportingHarness(graceSeconds: 172_800)
        let now = Clock.system.nowMilliseconds()
        try harness.record("no-expiry", type: "SERVICES", created: now - 60_000)
        harness.service.tick()
        #expect(harness.production.received.isEmpty)
        harness.service.tick(now: now - 60_000 + 172_800_000)
        #expect(harness.production.received.map { $0.report?.status } == [.noLineItem])
    }

    @Test func refreshedCustomLinkTokensWithoutAnAccountAreDuplicates() throws {
        let harness = try ReportingHarness()
        let now = Clock.system.nowMilliseconds()
        let created = now - 86_400_000
        let expires = now + 3_600_000
        // Landings carry no appAccountToken: Apple's refreshed token has the original's dates, another id.
        try harness.record("original", type: "SERVICES", created: created, expires: expires)
        try harness.record("refreshed", type: "SERVICES", created: created, expires: expires)
        try harness.record("another-customer", type: "SERVICES", created: created + 1, expires: expires + 1)
        try harness.tickUntilSettled()
        #expect(Self.statuses(harness.production) == ["refreshed": .duplicateToken])
        harness.service.tick(now: expires + 2)
        #expect(
            Self.statuses(harness.production) == [
                "original": .noLineItem, "refreshed": .duplicateToken, "another-customer": .noLineItem,
            ]
        )
    }

    @Test func theRefreshedTokenThatTookThePurchaseIsKeptAndTheOriginalIsTheDuplicate() throws {
        let harness = try ReportingHarness()
        let now = Clock.system.nowMilliseconds()
        let created = now - 86_400_000
        let expires = now + 3_600_000
        try harness.record("original", type: "ACQUISITION", created: created, expires: expires)
        harness.service.tick()
        #expect(harness.production.received.isEmpty)
        try harness.record("refreshed", type: "ACQUISITION", created: created, expires: expires)
        try harness.addBuy("refreshed")
        try harness.tickUntilSettled()
        #expect(Self.statuses(harness.production) == ["original": .duplicateToken, "refreshed": .lineItem])
        // The fake checks without the token, so it cannot judge DUPLICATE_TOKEN; the rest it can.
        #expect(
            harness.production.received.filter { $0.report?.status != .duplicateToken }.allSatisfy {
                $0.problems.isEmpty
            }
        )
    }

    /// Japan's and Brazil's tokens carry an expiry: like the EU's custom-link tokens they are reported at their
    /// expiry (a purchase in their active range still has somewhere to go), never after the link-out tokens'
    /// quiet wait; and they are never duplicates, however alike.
    @Test func japanAndBrazilTokensAreNeverDuplicatesAndWaitForTheirExpiry() throws {
        let harness = try ReportingHarness(graceSeconds: 172_800)
        let now = Clock.system.nowMilliseconds()
        let created = now - 60_000
        let expires = now + 30 * 86_400_000
        // One token per potential transaction, possibly alike in dates: each is reported on its own.
        for (id, type) in [
            ("in-app", "IN_APP"), ("in-app-2", "IN_APP"), ("link-out", "LINK_OUT"), ("within", "WITHIN_APP"),
        ] {
            try harness.record(id, type: type, created: created, expires: expires)
        }
        harness.service.tick()
        #expect(harness.production.received.isEmpty)
        harness.service.tick(now: created + 172_800_000)
        #expect(harness.production.received.isEmpty, "two days on, the tokens are active for four weeks more")
        // Their last active millisecond still belongs to them; the next one reports them.
        harness.service.tick(now: expires)
        #expect(harness.production.received.isEmpty)
        harness.service.tick(now: expires + 1)
        #expect(
            Self.statuses(harness.production) == [
                "in-app": .noLineItem, "in-app-2": .noLineItem, "link-out": .noLineItem, "within": .noLineItem,
            ]
        )
    }

    @Test func withoutCredentialsReportsWaitAndTheReasonIsGiven() throws {
        let harness = try ReportingHarness { $0.apple.keyId = "" }
        try harness.record("waiting")
        harness.service.tick()
        #expect(harness.production.received.isEmpty)
        #expect(try harness.reports("waiting").first?.state == .pending)
        #expect(harness.service.status == .waitingForCredentials("apple.keyId is empty"))
    }

    @Test func theJWTCarriesApplesClaims() throws {
        let harness = try ReportingHarness()
        try harness.record("claims")
        harness.service.tick()
        let request = try #require(harness.production.received.first)
        #expect(request.path == "/externalPurchase/v1/reports")
        #expect(request.signatureValid)
        #expect(request.jwtHeader == ["alg": "ES256", "kid": "2X9R4HXF34", "typ": "JWT"])
        #expect(request.claims["aud"] == .string("appstoreconnect-v1"))
        #expect(request.claims["bid"] == .string("com.example"))
        #expect(request.claims["iss"] == .string("57246542-96fe-1a63e053-0824d011072a"))
        guard case .integer(let iat) = request.claims["iat"], case .integer(let exp) = request.claims["exp"] else {
            Issue.record("iat and exp must be integers")
            return
        }
        #expect(exp > iat && exp - iat <= 3600)
    }
}
