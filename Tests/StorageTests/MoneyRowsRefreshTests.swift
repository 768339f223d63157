import Domain
import Foundation
import Storage
import Testing

/// The money rows stay right when what they were computed from changes afterwards: a token Apple corrects, a
/// buy stored after its refund or changed later, and amounts in a pricing currency far from the reporting one.
@Suite("Money rows refresh")
struct MoneyRowsRefreshTests {
    static let day = MoneyLedgerTests.day
    static let at = MoneyLedgerTests.at

    static func ledger(_ folder: LedgerTests.TemporaryFolder, window: Int64? = nil) throws -> Ledger {
        let ledger = try MoneyLedgerTests.open(folder)
        var regime = MoneyLedgerTests.regime
        regime.windowDays = window
        try ledger.money.useRegimes([regime])
        return ledger
    }

    static func row(_ ledger: Ledger, _ id: String, bundleId: String = "com.example") throws -> MoneyLineItem? {
        try ledger.money.lineItem(LineItemID(id), bundleId: BundleID(bundleId), environment: .production)
    }

    static func totals(_ ledger: Ledger) throws -> [MoneyDay] {
        try ledger.money.totals(fromDay: day, untilDay: day + 2)
    }

    /// Apple's notification gives the token another app and a creation date a day before the sale: the rows move
    /// to the app (counted once, also after the next refresh) and are classified from the new tap.
    @Test func aTokenAppleCorrectsHasItsRowsMadeAgain() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try Self.ledger(folder, window: 7)
        defer { ledger.close() }
        try ledger.reports.storeLineItems(
            [("b1", MoneyLedgerTests.buy("b1", inclusive: 23800, tax: 3800)), ("r1", MoneyLedgerTests.refund)],
            for: "t1",
            at: Self.at
        )
        // The recorded token was created in 2024: far outside the 7-day window.
        #expect(try Self.row(ledger, "b1")?.classification.commissionable == false)
        var apple = LedgerTests.token("t1", source: .notification)
        apple.token.bundleId = "com.other"
        apple.token.tokenCreationDate = Self.at - Milliseconds.day
        _ = try ledger.notifications.storeNotification(
            StoredNotification(
                notificationUUID: "n1",
                notificationType: "EXTERNAL_PURCHASE_TOKEN",
                subtype: "CREATED",
                externalPurchaseId: "t1",
                environment: .production,
                signedDate: 2,
                receivedAt: 2,
                source: .delivery,
                signedPayload: "x.y.z"
            )
        )
        let applied = try ledger.notifications.apply(
            NotificationChange(notificationUUID: "n1", at: 3, outcome: .known, token: apple, checkoutId: "c1")
        )
        #expect(applied?.corrections.map(\.field) == ["bundleId", "tokenCreationDate"])
        #expect(try Self.row(ledger, "b1") == nil && Self.row(ledger, "r1") == nil)
        let buy = try #require(try Self.row(ledger, "b1", bundleId: "com.other"))
        #expect(buy.classification.tapAt == Self.at - Milliseconds.day && buy.classification.daysFromTap == 1)
        #expect(buy.classification.commissionable && buy.classification.commission == 3000)
        let refund = try #require(try Self.row(ledger, "r1", bundleId: "com.other"))
        #expect(refund.classification.commission == -1500)
        // The next version of the buy replaces its row; it is not a second sale.
        try ledger.reports.storeLineItems(
            [("b1", MoneyLedgerTests.buy("b1", inclusive: 17850, tax: 2850, restated: true))],
            for: "t1",
            at: Self.at
        )
        // The first app's roll-up rows remain, at zero.
        let all = try Self.totals(ledger)
        let empty = all.filter { $0.bundleId == "com.example" }
        #expect(empty.allSatisfy { $0.sales == 0 && $0.refunds == 0 && $0.salesAmount == 0 && $0.commission == 0 })
        let totals = all.filter { $0.bundleId != "com.example" }
        #expect(totals.map(\.bundleId) == ["com.other"])
        #expect(totals.map(\.sales) == [1] && totals.map(\.salesAmount) == [17850] && totals.map(\.refunds) == [1])
        #expect(totals.map(\.commission) == [2250 - 1500])
    }

    /// One batch may list a refund before its buy (the validator finds the buy anywhere in it).
    @Test func aRefundPostedBeforeItsBuyInOneBatchReversesTheBuy() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try Self.ledger(folder)
        defer { ledger.close() }
        try ledger.reports.storeLineItems(
            [("r1", MoneyLedgerTests.refund), ("b1", MoneyLedgerTests.buy("b1", inclusive: 23800, tax: 3800))],
            for: "t1",
            at: Self.at
        )
        let refund = try #require(try Self.row(ledger, "r1"))
        #expect(refund.productId == "pro" && refund.productType == "ONE_TIME_BUY")
        #expect(refund.classification.regimeId == "test" && refund.classification.commission == -1500)
        #expect(try Self.totals(ledger).map(\.commission) == [1500])
    }

    /// A buy restated into a country no regime covers takes its refund's commission reversal with it.
    @Test func aRefundFollowsItsBuysRestatement() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try Self.ledger(folder)
        defer { ledger.close() }
        try ledger.reports.storeLineItems(
            [("b1", MoneyLedgerTests.buy("b1", inclusive: 23800, tax: 3800))],
            for: "t1",
            at: Self.at
        )
        try ledger.reports.storeLineItems([("r1", MoneyLedgerTests.refund)], for: "t1", at: Self.at)
        #expect(try Self.row(ledger, "r1")?.classification.commission == -1500)
        let restated = MoneyLedgerTests.buy("b1", inclusive: 23800, tax: 3800, restated: true)
            .replacingOccurrences(of: "\"DEU\"", with: "\"USA\"")
        try ledger.reports.storeLineItems([("b1", restated)], for: "t1", at: Self.at)
        let refund = try #require(try Self.row(ledger, "r1"))
        #expect(refund.classification.regimeId == nil && refund.classification.commission == 0)
        let commission: Int64 = try Self.totals(ledger).map(\.commission).reduce(0, +)
        #expect(commission == 0)
    }

    static func uzs(_ id: String, event: String, inclusive: Int64, rate: String, reference: String? = nil) -> String {
        """
        {"lineItemId": "\(id)", "creationDate": \(at), "eventType": "\(event)", "productType": "ONE_TIME_BUY",
         "productIdentifier": "pro", "quantity": 1, "amountTaxInclusive": \(inclusive),
         "amountTaxExclusive": \(inclusive), "taxAmount": 0, "netAmountTaxExclusive": \(inclusive),
         "pricingCurrency": "UZS", "reportingCurrency": "EUR", "taxCountry": "UZB", "exchangeRate": \(rate)
         \(reference.map { ", \"referenceLineItemId\": \"\($0)\"" } ?? "")}
        """
    }

    /// Rates of more than 12 decimals or 15 digits convert exactly rounded (up to the 38 digits a rate may
    /// have); a figure that cannot be converted is 0, never the reporting-currency amount.
    @Test func pricingAmountsConvertAnyRateAndNeverFallBackToTheReportedFigure() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try Self.ledger(folder)
        defer { ledger.close() }
        let longest = "0.0000714285714285714285714285714285714"  // 38 digits
        try ledger.reports.storeLineItems(
            [
                ("b1", Self.uzs("b1", event: "BUY", inclusive: 1000, rate: "0.0000714285714286")),
                ("b2", Self.uzs("b2", event: "BUY", inclusive: 1000, rate: longest)),
                ("b3", Self.uzs("b3", event: "BUY", inclusive: 9_000_000_000_000_000, rate: "0.000001")),
            ],
            for: "t1",
            at: Self.at
        )
        // 1 EUR ÷ 0.0000714285714286 = 13,999.99999997… UZS, in milli-units 14,000,000 (rounded); the same at
        // the 38-digit rate.
        let b1 = try #require(try Self.row(ledger, "b1"))
        #expect(b1.pricingAmount == 14_000_000 && b1.pricingAmountSource == .exchangeRate)
        let b2 = try #require(try Self.row(ledger, "b2"))
        #expect(b2.pricingAmount == 14_000_000 && b2.pricingAmountSource == .exchangeRate)
        // 9×10^15 EUR ÷ 10^-6 does not fit in 64-bit milli-units.
        let b3 = try #require(try Self.row(ledger, "b3"))
        #expect(b3.pricingAmount == 0 && b3.pricingAmountSource == .unknown)
    }

    /// A refund's pricing amount is its buy's in proportion, whatever the rate on the refund's day: a full refund
    /// takes back exactly what the buy counted.
    @Test func aFullRefundNetsToZeroInThePricingCurrency() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try Self.ledger(folder)
        defer { ledger.close() }
        try ledger.reports.storeLineItems(
            [
                ("b1", Self.uzs("b1", event: "BUY", inclusive: 11900, rate: "0.0000714285714286")),
                ("r1", Self.uzs("r1", event: "REFUND", inclusive: 11900, rate: "0.0000701", reference: "b1")),
                ("b2", Self.uzs("b2", event: "BUY", inclusive: 3000, rate: "0.0000714285714286")),
                ("r2", Self.uzs("r2", event: "REFUND", inclusive: 1000, rate: "0.0000701", reference: "b2")),
            ],
            for: "t1",
            at: Self.at
        )
        let b1 = try #require(try Self.row(ledger, "b1"))
        let r1 = try #require(try Self.row(ledger, "r1"))
        #expect(r1.pricingAmount == b1.pricingAmount && r1.pricingAmountSource == .buy)
        // A third of 42,000 UZS (3 EUR at the buy's rate), not 1 EUR at the refund's rate (14,265.335 UZS).
        let b2 = try #require(try Self.row(ledger, "b2"))
        let r2 = try #require(try Self.row(ledger, "r2"))
        #expect(b2.pricingAmount == 42_000_000 && r2.pricingAmount == 14_000_000)
        let totals = try Self.totals(ledger)
        let sales: Int64 = totals.map(\.salesPricing).reduce(0, +)
        let refunds: Int64 = totals.map(\.refundsPricing).reduce(0, +)
        #expect(sales - refunds == 28_000_000)
    }
}
