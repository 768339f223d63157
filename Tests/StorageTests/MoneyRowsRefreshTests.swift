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
        try ledger.money.lineItem(id, bundleId: bundleId, environment: .production)
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
                source: "delivery",
                signedPayload: "x.y.z"
            )
        )
        let applied = try ledger.notifications.apply(
            NotificationChange(notificationUUID: "n1", at: 3, outcome: "known", token: apple, checkoutId: "c1")
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
}
