import Domain
import ExternalPurchase
import Foundation
import Payments
import Testing

@testable import LinkOut
@testable import Storage

/// A subscription's items in the order of their periods, whatever order they were delivered in.
@Suite("SubscriptionHistory")
struct SubscriptionHistoryTests {
    let mapper = AppleLineItems(fallbackTaxCountry: "DEU")
    /// 2026-01-01T00:00:00Z, and 30 days.
    static let january: Int64 = 1_767_225_600_000
    static let month: Int64 = 30 * 86_400_000

    func start() throws -> SubscriptionBuyLineItem {
        var purchase = AppleLineItemsTests.purchase(mode: .subscription, total: 999, tax: 160)
        purchase.completedAt = Self.january
        purchase.productId = "pro.monthly"
        return try mapper.subscriptionStart(
            purchase,
            period: SubscriptionPeriod(start: Self.january, end: Self.january + Self.month)
        )
    }

    func renewal(_ id: String, from start: Int64, after previous: SubscriptionBuyLineItem) throws
        -> SubscriptionBuyLineItem
    {
        let invoice = InvoicePayment(
            invoiceId: id,
            subscriptionId: "sub_1",
            billingReason: "subscription_cycle",
            externalPurchaseId: "0000-epid",
            bundleId: "com.example",
            productId: "pro.monthly",
            currency: "EUR",
            totalExcludingTax: 839,
            tax: 160,
            total: 999,
            amountPaid: 999,
            period: SubscriptionPeriod(start: start, end: start + Self.month),
            customerCountry: nil,
            paymentIntentId: nil,
            paidAt: start
        )
        return try mapper.renewal(invoice, previous: previous)
    }

    func history(_ items: [SubscriptionBuyLineItem]) throws -> SubscriptionHistory {
        let chain = try items.enumerated().map { index, item in
            StoredLineItem(
                rowId: Int64(index + 1),
                externalPurchaseId: "0000-epid",
                lineItemId: item.lineItemId,
                body: try PaymentChangeMapper.encode(.subscriptionBuy(item)),
                receivedAt: item.creationDate
            )
        }
        return SubscriptionHistory(chain: chain, startedBy: "cs_test_a1") { _ in nil }
    }

    /// March delivered before February: February follows January, and March counts February's days too.
    @Test func aLateRenewalFollowsThePeriodBeforeItAndTheNextCountsItsDays() throws {
        let start = try start()
        let marchFirst = try renewal("in_mar", from: Self.january + 2 * Self.month, after: start)
        #expect(marchFirst.subscriptionDaysOfPaidService == 30, "followed the start: February's days left out")
        let history = try history([start, marchFirst])
        let previous = try #require(try history.preceding(Self.january + Self.month, except: "in_feb"))
        #expect(previous.item.lineItemId == start.lineItemId && previous.paid)
        let february = try renewal("in_feb", from: Self.january + Self.month, after: previous.item)
        #expect(february.subscriptionDaysOfPaidService == 30)
        let following = try history.following(february)
        #expect(following.map(\.lineItemId) == ["in_mar"])
        #expect(following.first?.subscriptionDaysOfPaidService == 60)
        // In order, nothing follows the newest.
        #expect(try history.following(marchFirst).isEmpty)
    }

    /// A period the provider dates a moment before the start's follows the start, and counts nothing again.
    @Test func aPeriodDatedBeforeTheStartFollowsTheStart() throws {
        let start = try start()
        let history = try history([start])
        let previous = try #require(try history.preceding(Self.january - 1_000, except: "in_early"))
        #expect(previous.item.lineItemId == start.lineItemId)
        let early = try renewal("in_early", from: Self.january - 1_000, after: previous.item)
        #expect(early.subscriptionDaysOfPaidService == 0, "the start's period, paid again, is one period")
        #expect(try history.following(early).isEmpty)
        #expect(
            try SubscriptionHistory(chain: [], startedBy: "cs_test_a1") { _ in nil }.preceding(0, except: "x") == nil
        )
    }
}
