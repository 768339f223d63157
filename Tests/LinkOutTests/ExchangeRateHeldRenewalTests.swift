import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Payments
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// A renewal held for its exchange rate, paid after the purchase's custom-link token expired: when the rate
/// arrives, no token of the customer is active at its date, so its line item stays held for placement (not
/// lost), and it is reported once the app forwards a token of the customer active then.
@Suite("Payment flow: a renewal released from its rate hold onto no active token")
struct ExchangeRateHeldRenewalTests {
    static func rates(_ day: String) -> Data {
        Data(#"{"KWD": {"reportingCurrency": "USD", "rates": {"\#(day)": "3.2510"}}}"#.utf8)
    }

    /// Stripe selling a monthly subscription in Kuwaiti dinars, its rates read from `rates`.
    static func harness(clock: Clock, rates file: URL) throws -> PaymentHarness {
        try PaymentHarness(provider: .stripe, clock: clock) { configuration in
            configuration.catalog = [
                Product(
                    id: "pro.monthly",
                    kind: .subscription,
                    names: ["en": "Pro"],
                    prices: ["KWD": Money(currency: "KWD", decimal: "1.250")].compactMapValues { $0 }
                )
            ]
            configuration.payments.exchangeRatesFile = file.path
        }
    }

    /// The subscription's start, paid in dinars at `created` (UNIX seconds).
    static func started(_ checkout: PaymentHarness.Checkout, at created: Int64) -> String {
        StripeEvents.sessionCompleted(
            id: "evt_start",
            session: "cs_test_fake1",
            checkout: checkout,
            product: "pro.monthly",
            mode: "subscription",
            currency: "kwd",
            total: 1250,
            tax: 0,
            country: "KW",
            subscription: "sub_1",
            created: created
        )
    }

    /// Another event delivered (one linkout has nothing to do with), so the payment service passes again and
    /// releases what its rate now allows.
    static func passAgain(_ harness: PaymentHarness, at seconds: Int64) throws {
        let other = """
            {"id":"evt_other","object":"event","type":"customer.created","created":\(seconds),\
            "livemode":false,"data":{"object":{"id":"cus_1"}}}
            """
        #expect(try harness.deliver(other, timestamp: seconds).status == 200)
        try harness.waitForEvents()
    }

    @Test func theRenewalEndsHeldForATokenThenIsPlaced() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-rates-\(UUID()).json")
        defer { try? FileManager.default.removeItem(at: file) }
        // Three hours back, so every date the test reaches is past by Apple's (the fake's) clock too.
        let time = ManualClock(startingAt: Clock.system.nowMilliseconds() - 10_800_000)
        let start = time.clock.nowMilliseconds()
        try Self.rates(ExchangeRateTable.dayText(start)).write(to: file)
        let harness = try Self.harness(clock: time.clock, rates: file)
        let account = PaymentHarness.account
        let first = PaymentHarness.servicesToken(createdAt: start - 60_000, expiresAt: start + 3_600_000)
        #expect(try harness.forward(first, account: account).status == 201)
        let checkout = try harness.openCheckout(token: first)
        #expect(try harness.choose(checkout, product: "pro.monthly", currency: "KWD").status == 303)
        let completed = Self.started(checkout, at: time.clock.nowSeconds())
        #expect(try harness.deliver(completed, timestamp: time.clock.nowSeconds()).status == 200)
        try harness.waitForEvents()
        #expect(harness.reportedLineItems().map { $0["lineItemId"] as? String } == ["cs_test_fake1"])
        #expect(harness.apple.apple.waitForRequest())  // the start's report, received above

        // The rates file loses the day's rate; two hours on, the first token has expired when the renewal is paid.
        try Self.rates(ExchangeRateTable.dayText(start - 10 * 86_400_000)).write(to: file)
        let firstEnd = try harness.firstPeriodEnd(on: checkout.externalPurchaseId)
        time.advance(seconds: 7_200)
        let renewedAt = time.clock.nowSeconds()
        let renewal = StripeEvents.renewal(
            id: "evt_in_2",
            invoice: "in_2",
            subscription: "sub_1",
            total: 1250,
            start: firstEnd,
            end: firstEnd + 30 * 86_400,
            created: renewedAt,
            currency: "kwd"
        )
        #expect(try harness.deliver(renewal, timestamp: renewedAt).status == 200)
        try harness.waitForEvents()
        let ledger = harness.live.application.ledger
        #expect(try ledger.payments.heldPaymentEvents().count == 1)

        // The rate arrives; the next pass releases the renewal, which no token of the customer can carry yet.
        try Self.rates(ExchangeRateTable.dayText(start)).write(to: file)
        try Self.passAgain(harness, at: renewedAt)
        #expect(try ledger.payments.heldPaymentEvents().isEmpty)
        #expect(try ledger.reports.lineItemsAwaitingToken(limit: 10).map(\.lineItemId) == ["in_2"])
        #expect(
            try ledger.payments.purchase(id: "cs_test_fake1")?.paidDays ?? 0 > 0,
            "the renewal's paid days carry on"
        )

        // The app forwards a token of the customer active at the renewal's date: the renewal is reported on it.
        let second = PaymentHarness.servicesToken(createdAt: start + 3_600_000, expiresAt: start + 365 * 86_400_000)
        #expect(try harness.forward(second, account: account).status == 201)
        // Polled, bounded: other reports may reach the fake first, so any one request proves nothing.
        #expect(
            eventually(within: 30) {
                harness.apple.apple.received.contains { $0.report?.externalPurchaseId == second.externalPurchaseId }
            }
        )
        #expect(try ledger.reports.lineItemsAwaitingToken(limit: 10).isEmpty)
        let onSecond = harness.apple.apple.received.filter {
            $0.report?.externalPurchaseId == second.externalPurchaseId
        }
        #expect(onSecond.flatMap { $0.report?.lineItems ?? [] }.map(\.common.lineItemId) == ["in_2"])
        #expect(harness.apple.apple.received.allSatisfy { $0.problems.isEmpty })
    }

    /// A renewal held for its rate while the one after it went to Apple: when the rate comes, the held one is made
    /// and the later one is restated with the days the held one adds (its restatement was left out of the release,
    /// and Apple kept a count of paid days too low).
    @Test func aRenewalReleasedFromItsRateRestatesTheLaterOne() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-rates-\(UUID()).json")
        defer { try? FileManager.default.removeItem(at: file) }
        let time = ManualClock(startingAt: Clock.system.nowMilliseconds() - 10_800_000)
        let start = time.clock.nowMilliseconds()
        try Self.rates(ExchangeRateTable.dayText(start)).write(to: file)
        let harness = try Self.harness(clock: time.clock, rates: file)
        let token = PaymentHarness.servicesToken(createdAt: start - 60_000, expiresAt: start + 365 * 86_400_000)
        #expect(try harness.forward(token, account: PaymentHarness.account).status == 201)
        let checkout = try harness.openCheckout(token: token)
        #expect(try harness.choose(checkout, product: "pro.monthly", currency: "KWD").status == 303)
        let completed = Self.started(checkout, at: time.clock.nowSeconds())
        #expect(try harness.deliver(completed, timestamp: time.clock.nowSeconds()).status == 200)
        try harness.waitForEvents()
        let started = try #require(harness.reportedLineItems().first)
        let startDays = SubscriptionPeriod(
            start: try #require(started["subscriptionStartDate"] as? Int64),
            end: try #require(started["subscriptionEndDate"] as? Int64)
        ).days

        time.advance(seconds: 600)
        let renewedAt = time.clock.nowSeconds()
        let firstEnd = try harness.firstPeriodEnd(on: checkout.externalPurchaseId)
        func renewal(_ invoice: String, at: Int64, period: Int64) -> String {
            StripeEvents.renewal(
                id: "evt_\(invoice)",
                invoice: invoice,
                subscription: "sub_1",
                total: 1250,
                start: firstEnd + period * 30 * 86_400,
                end: firstEnd + (period + 1) * 30 * 86_400,
                created: at,
                currency: "kwd"
            )
        }
        // The later renewal first, reported; then the one before it, held: the rates file lost the day's rate.
        #expect(try harness.deliver(renewal("in_3", at: renewedAt + 60, period: 1), timestamp: renewedAt).status == 200)
        try harness.waitForEvents()
        // `in_3` is dated a minute ahead of the server's clock: its report waits for that date.
        time.advance(seconds: 60)
        _ = harness.reportedLineItems()
        try Self.rates(ExchangeRateTable.dayText(start - 10 * 86_400_000)).write(to: file)
        #expect(try harness.deliver(renewal("in_2", at: renewedAt, period: 0), timestamp: renewedAt).status == 200)
        try harness.waitForEvents()
        let ledger = harness.live.application.ledger
        #expect(try ledger.payments.heldPaymentEvents().count == 1)

        // The rate arrives; the next pass makes the held renewal and restates the later one.
        try Self.rates(ExchangeRateTable.dayText(start)).write(to: file)
        try Self.passAgain(harness, at: renewedAt)
        #expect(try ledger.payments.heldPaymentEvents().isEmpty)
        let latest = Dictionary(harness.reportedLineItems().map { ($0["lineItemId"] as? String ?? "", $0) }) { $1 }
        #expect(latest["in_2"]?["subscriptionDaysOfPaidService"] as? Int == Int(startDays))
        #expect(latest["in_3"]?["subscriptionDaysOfPaidService"] as? Int == Int(startDays) + 30)
        #expect(latest["in_3"]?["restatement"] as? Bool == true)
        #expect(harness.apple.apple.received.allSatisfy { $0.problems.isEmpty })
    }
}
