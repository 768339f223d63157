import Crypto
import Domain
import ExternalPurchase
import Foundation
import HTTPServer
import Lifecycle
import Logging
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// What a compliance review of reporting found, each held by a test.
@Suite("Reporting review")
struct ReportingReviewTests {
    static let errors = #"{"errors":[{"errorCode":4000023,"errorMessage":"bad","fieldName":"taxAmount"}]}"#

    /// Apple: restate by resending the same lineItemId with `restatement: true`. A rejected report revised
    /// with the restated item must carry it instead of the original, not both under one id.
    @Test func aRestatedItemReplacesTheOriginalInARevisedReport() throws {
        let harness = try ReportingHarness()
        try harness.record("restated")
        let itemId = UUID().uuidString.lowercased()
        try harness.addBuy("restated", lineItemId: itemId)
        harness.production.enqueue(.respond(status: 400, body: Self.errors))
        harness.service.tick()
        let rejected = try #require(try harness.reports("restated").first)
        #expect(rejected.state == .rejected)

        // A restatement keeps the creationDate the item was reported with (Apple's
        // RestatementCreationDateMismatchError).
        let original = try #require(try harness.ledger.reports.lineItems(for: "restated").first?.body)
        let created = try #require(
            (try JSONSerialization.jsonObject(with: Data(original.utf8)) as? [String: Any])?["creationDate"] as? Int64
        )
        var restated = ReportingHarness.buyJSON(lineItemId: itemId, euros: 12)
            .replacingOccurrences(of: #""quantity":1}"#, with: #""quantity":1,"restatement":true}"#)
        if let date = restated.range(of: #""creationDate":[0-9]+"#, options: .regularExpression) {
            restated.replaceSubrange(date, with: "\"creationDate\":\(created)")
        }
        try harness.ledger.reports.storeLineItems(
            [(LineItemID(itemId), restated)],
            for: "restated",
            at: Clock.system.nowMilliseconds()
        )
        try harness.tickUntilSettled()
        let received = harness.production.received
        #expect(received.count == 2)
        let items = try #require(received.last?.report?.lineItems)
        #expect(items.count == 1)
        // Apple holds no version of it (the report that carried the first was refused): a new item to Apple, not a
        // restatement, whatever the stored version said.
        #expect(items.first?.common.restatement == nil)
        #expect(items.first?.common.amountTaxExclusive == 12_000)
        #expect(received.last?.report?.requestIdentifier == rejected.requestIdentifier)
        #expect(try harness.reports("restated").map(\.state) == [.accepted])
    }

    /// Apple's 200 lost (a timeout), the retry answered 400 as a duplicate request: Apple has the report, so
    /// Retrieve External Purchase Report settles it as accepted instead of rejected.
    @Test func aLost200IsSettledWithRetrieveNotMarkedRejected() throws {
        let harness = try ReportingHarness(timeoutSeconds: 1)
        try harness.record("lost")
        harness.production.enqueue(.hang(milliseconds: 1_500), .respond(status: 400, body: Self.errors))
        harness.service.tick()
        let first = try #require(try harness.reports("lost").first)
        #expect(first.state == .pending)
        harness.service.tick(now: first.nextAttemptAt)
        let settled = try #require(try harness.reports("lost").first)
        #expect(settled.state == .accepted)
        #expect(harness.production.received.count == 2)
    }

    /// A report whose first answer is a 400 stays rejected: Apple has nothing under its identifier.
    @Test func aFirst400StaysRejected() throws {
        let harness = try ReportingHarness()
        try harness.record("refused")
        harness.production.enqueue(.respond(status: 400, body: Self.errors))
        harness.service.tick()
        #expect(try harness.reports("refused").first?.state == .rejected)
    }

    /// A key that cannot sign is not a network problem: sending is blocked and says so, as for a 401; once the
    /// file holds the private key, the next look at it (at most a minute later) sends the report.
    @Test func aSigningFailureBlocksReportingUntilTheKeyFileIsFixed() throws {
        let harness = try ReportingHarness()
        try harness.record("unsigned")
        let keyFile = harness.directory.appendingPathComponent("public.p8")
        try Data(try harness.key.publicKeyPEM().utf8).write(to: keyFile)
        var configuration = harness.configuration
        configuration.apple.privateKeyFile = keyFile.path
        let service = ReportingService(
            configuration: configuration,
            ledger: harness.ledger,
            logger: Logger(label: "test", level: .critical)
        )
        service.tick()
        guard let block = service.status.blocks.first, block.reason == .signingFailed else {
            Issue.record("expected a block, got \(service.status)")
            return
        }
        #expect(service.status.description.contains("sign"))
        let later = Clock.system.nowMilliseconds() + 86_400_000
        service.tick(now: later)
        #expect(harness.production.received.isEmpty)
        #expect(try harness.reports("unsigned").first?.state == .pending)
        try Data(try harness.key.privateKeyPEM().utf8).write(to: keyFile, options: .atomic)
        service.tick(now: later + 61_000)
        #expect(service.status == .running)
        #expect(harness.production.received.count == 1)
        #expect(try harness.reports("unsigned").first?.state == .accepted)
    }

    /// 403, 404 and other 4xx answers Apple does not document: sending is blocked, the report is kept, the
    /// reason shows; nothing is retried blindly, but one report is tried every five minutes, and when Apple
    /// takes it, reporting goes on by itself.
    @Test(arguments: [403, 404, 409, 413])
    func anUndocumented4xxBlocksSendingUntilAProbeIsAccepted(status: Int) throws {
        let harness = try ReportingHarness()
        try harness.record("odd-\(status)")
        harness.production.enqueue(.respond(status: status, body: "nope"))
        try harness.tickUntilSettled()
        #expect(harness.production.received.count == 1)
        guard let block = harness.service.status.blocks.first, block.reason == .undocumentedAnswer else {
            Issue.record("expected a block, got \(harness.service.status)")
            return
        }
        #expect(harness.service.status.description.contains("\(status)"))
        let report = try #require(try harness.reports("odd-\(status)").first)
        #expect(report.state == .pending)
        #expect(report.lastHTTPStatus == Int64(status))
        harness.service.tick(now: block.nextProbeAt - 1)
        #expect(harness.production.received.count == 1)
        harness.service.tick(now: block.nextProbeAt)
        #expect(harness.production.received.count == 2)
        #expect(harness.service.status == .running)
        #expect(try harness.reports("odd-\(status)").first?.state == .accepted)
    }

    /// Apple: a lineItemId "must be unique per app": the same id on another token of the app is refused.
    @Test func aLineItemIdIsUniqueAcrossTheTokensOfAnApp() throws {
        let live = try LiveApplication { $0.apiToken = "backend-secret" }
        let now = Clock.system.nowMilliseconds()
        for id in ["first-token", "second-token"] {
            try live.recordAppToken(id, now: now)
        }
        let itemId = UUID().uuidString.lowercased()
        let body = #"{"lineItems": [\#(ReportingHarness.buyJSON(lineItemId: itemId))]}"#
        let headers = ["Authorization": "Bearer backend-secret"]
        let first = try live.post(
            "/v1/tokens/first-token/line-items",
            contentType: "application/json",
            body: body,
            headers: headers
        )
        #expect(first.status == 202)
        let second = try live.post(
            "/v1/tokens/second-token/line-items",
            contentType: "application/json",
            body: body,
            headers: headers
        )
        #expect(second.status == 400)
        #expect(second.text.contains("DuplicateValueError"))
        #expect(try live.ledger().reports.lineItems(for: "second-token").isEmpty)
    }

    /// The NO_LINE_ITEM wait counts from `tokenCreationDate` (Apple's 10-day clock), not from when linkout
    /// first saw the token: a token forwarded late is reported at once.
    @Test func theNoLineItemWaitCountsFromTokenCreation() throws {
        let harness = try ReportingHarness(graceSeconds: 3_600)
        try harness.record("late", created: Clock.system.nowMilliseconds() - 2 * 3_600_000)
        try harness.record("fresh", created: Clock.system.nowMilliseconds() - 60_000)
        harness.service.tick()
        let reported = harness.production.received.compactMap { $0.report?.externalPurchaseId }
        #expect(reported == ["late"])
    }

    /// A demo checkout on `token`, opened at `at` and not paid.
    static func openCheckout(on token: String, at: Int64, in ledger: Ledger) throws {
        _ = try ledger.payments.recordPaymentSession(
            PaymentSessionRecord(
                sessionId: "s-\(token)",
                provider: ProviderID("demo"),
                intentId: "i-\(token)",
                checkoutId: "c-\(token)",
                externalPurchaseId: ExternalPurchaseID(token),
                productId: "pro.lifetime",
                currency: "EUR",
                amount: "29.99",
                language: "en",
                url: "http://127.0.0.1/pay",
                state: .open,
                createdAt: at,
                updatedAt: at
            )
        )
    }

    /// An open payment holds a young token's NO_LINE_ITEM report (the purchase may follow), but never past 9
    /// days after the token's creation: Apple's `UNREPORTED` comes at 10.
    @Test func aPaymentHoldNeverOutlastsApplesDeadline() throws {
        let harness = try ReportingHarness(graceSeconds: 3_600)
        let now = Clock.system.nowMilliseconds()
        try harness.record("young", created: now - 2 * 3_600_000)
        try harness.record("old", created: now - 9 * 86_400_000 - 3_600_000)
        for id in ["young", "old"] { try Self.openCheckout(on: id, at: now - 60_000, in: harness.ledger) }
        harness.service.tick()
        #expect(harness.production.received.compactMap { $0.report?.externalPurchaseId } == ["old"])
        // The monthly close says why the young token waits, as the planner does: it was `unreported` ("the next
        // reporting pass plans it") while `linkout report --dry-run` planned nothing for it.
        let close = MonthlyClose(ledger: harness.ledger, configuration: harness.configuration)
        let report = try close.report(month: CloseMonth(containing: now - 2 * 3_600_000), now: now, status: .running)
        let young = try #require(report.outstandingList.first { $0.externalPurchaseId == "young" })
        #expect(young.state == "payment_open", "\(young)")
        #expect(young.action.contains("NO_LINE_ITEM is sent once the hold ends"), "\(young)")
        #expect(report.tokens.byState["unreported"] == nil, "\(report.tokens.byState)")
        // A custom-link token past its expiry with a checkout opened before it: held the same way.
        try harness.record("custom", type: "SERVICES", created: now - 3 * 3_600_000, expires: now - 60_000)
        try Self.openCheckout(on: "custom", at: now - 120_000, in: harness.ledger)
        #expect(
            try harness.ledger.reports.tokensNeedingReports(
                now: now,
                quietSince: now - 3_600_000,
                paymentsOpenSince: now - Milliseconds.day,
                paymentsPendingSince: now - Milliseconds.days(7),
                holdsEndForTokensCreatedBefore: now - Milliseconds.days(9),
                duplicateWindow: .init(after: nil, through: nil, isFull: false),
                limit: 10
            ).allSatisfy { $0.token.externalPurchaseId != "custom" }
        )
        let expired = try close.report(month: CloseMonth(containing: now - 3 * 3_600_000), now: now, status: .running)
        let custom = try #require(expired.outstandingList.first { $0.externalPurchaseId == "custom" })
        #expect(custom.state == "payment_open", "\(custom)")
    }

    /// A wait of 10 days or more would report after Apple's `UNREPORTED` notice.
    @Test func theNoLineItemWaitStaysBelowTenDays() throws {
        #expect(throws: ConfigurationError.self) {
            try Configuration.parse(Data(#"{"reporting": {"noLineItemAfterSeconds": 864000}}"#.utf8))
        }
        let week = try Configuration.parse(Data(#"{"reporting": {"noLineItemAfterSeconds": 604800}}"#.utf8))
        #expect(week.reporting.noLineItemAfterSeconds == 604_800)
    }

    /// `taxCountry` must be an ISO 3166-1 alpha-3 code, not just three capitals.
    @Test func taxCountryMustBeAnAlpha3Code() throws {
        let decoder = JSONDecoder()
        func problems(_ country: String) throws -> [String] {
            let json = ReportingHarness.buyJSON(lineItemId: "x").replacingOccurrences(of: "DEU", with: country)
            let item = try decoder.decode(LineItem.self, from: Data(json.utf8))
            return ReportValidator(token: nil, now: Clock.system.nowMilliseconds()).problems(in: [item]).map(\.name)
        }
        #expect(try problems("DEU") == [])
        #expect(try problems("ESP") == [])
        #expect(try problems("XYZ") == ["UnknownEnumError"])
        #expect(try problems("EUR") == ["UnknownEnumError"])
        #expect(try problems("deu") == ["UnknownEnumError"])
    }

    /// A 429 pauses all sending until Retry-After and is not counted against the report (its later backoff
    /// must not grow because Apple was busy).
    @Test func a429PausesSendingWithoutCountingAnAttempt() throws {
        let harness = try ReportingHarness()
        for index in 0..<3 { try harness.record("busy-\(index)") }
        let retryAt = Clock.system.nowMilliseconds() + 60_000
        harness.production.enqueue(.respond(status: 429, headers: ["Retry-After": String(retryAt)]))
        harness.service.tick()
        let reports = try harness.ledger.reports.reports(limit: 10)
        let limited = try #require(reports.first { $0.lastHTTPStatus == 429 })
        #expect(limited.attempts == 0)
        #expect(limited.nextAttemptAt == retryAt)
        // The pause is seen: `/readyz` says until when, and a gauge holds the moment.
        let readiness = String(
            decoding: Readiness(ledger: harness.ledger, reporting: harness.service, clock: .system).response().body,
            as: UTF8.self
        )
        #expect(readiness.contains("Apple rate-limited sending (429); it resumes at "), "\(readiness)")
        let paused = ReportGauges.sample(
            ledger: harness.ledger,
            reporting: harness.service,
            clock: .system,
            logger: Logger(label: "test", level: .critical)
        ).first { $0.name == "linkout_reporting_paused_until_seconds" }
        #expect(paused?.value == Int(retryAt / 1000))
        // Nothing else went out during the pause.
        harness.service.tick()
        #expect(harness.production.received.count <= 3)
        let sentAfter429 = harness.production.received.count
        harness.service.tick(now: retryAt - 1)
        #expect(harness.production.received.count == sentAfter429)
        harness.service.tick(now: retryAt)
        #expect(try harness.ledger.reports.reports(limit: 10).allSatisfy { $0.state == .accepted })
    }

    /// One report hanging until the timeout does not hold the others back: they are sent alongside it.
    @Test func aHangingReportDoesNotHoldTheOthers() throws {
        // A timeout long enough that the three others, sent once the probe has waited its half second, are
        // answered well before it even on a loaded machine.
        let harness = try ReportingHarness(timeoutSeconds: 5)
        for index in 0..<4 { try harness.record("parallel-\(index)") }
        harness.production.enqueue(.hang(milliseconds: 6_000))
        harness.service.tick()
        let reports = try harness.ledger.reports.reports(limit: 10)
        let hung = try #require(reports.first { $0.state == .pending })
        let hungAt = try #require(hung.lastAttemptAt)
        let accepted = reports.compactMap(\.acceptedAt)
        #expect(accepted.count == 3)
        #expect(accepted.allSatisfy { $0 < hungAt - 1_000 })
    }
}
