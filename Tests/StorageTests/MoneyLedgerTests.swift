import Domain
import Foundation
import Testing

@testable import Storage

/// The money rows and the daily roll-up follow the line items as they are stored, restated, retracted, reported
/// and accepted, in the same transactions; a rebuild gives the same figures as the incremental writes.
@Suite("Money ledger")
struct MoneyLedgerTests {
    static let day: Int64 = 20_400  // 2025-11-08 (UTC)
    static let at = day * Milliseconds.day + 3_600_000

    static func buy(_ id: String, inclusive: Int64, tax: Int64, restated: Bool = false, retracted: Bool = false)
        -> String
    {
        var fields = """
            "lineItemId": "\(id)", "creationDate": \(at), "eventType": "BUY", "productType": "ONE_TIME_BUY",
            "productIdentifier": "pro", "quantity": 1, "amountTaxInclusive": \(inclusive),
            "amountTaxExclusive": \(inclusive - tax), "taxAmount": \(tax), "netAmountTaxExclusive": \(inclusive - tax),
            "pricingCurrency": "EUR", "reportingCurrency": "EUR", "taxCountry": "DEU"
            """
        if restated { fields += ", \"restatement\": true" }
        if retracted { fields += ", \"erroneouslySubmitted\": true" }
        return "{\(fields)}"
    }

    static let refund = """
        {"lineItemId": "r1", "creationDate": \(at + Milliseconds.day), "eventType": "REFUND",
         "referenceLineItemId": "b1", "amountTaxInclusive": 11900, "amountTaxExclusive": 10000, "taxAmount": 1900,
         "netAmountTaxExclusive": 0, "pricingCurrency": "EUR", "reportingCurrency": "EUR", "taxCountry": "DEU"}
        """

    static func open(_ folder: LedgerTests.TemporaryFolder) throws -> Ledger {
        let ledger = try LedgerTests.open(folder)
        _ = try ledger.tokens.recordForwardedToken(LedgerTests.token("t1", source: .app), checkoutId: "c1", at: at)
        return ledger
    }

    static let regime = CommissionRegime(
        id: "test",
        countries: ["DEU"],
        from: 0,
        standardBasisPoints: 1500,
        reducedBasisPoints: 1000,
        source: "test",
        confidence: "test"
    )

    @Test func rowsFollowStoresRestatementsRetractionsAndAcceptance() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try Self.open(folder)
        defer { ledger.close() }
        try ledger.money.useRegimes([Self.regime])
        try ledger.reports.storeLineItems([("b1", Self.buy("b1", inclusive: 23800, tax: 3800))], for: "t1", at: Self.at)
        try ledger.reports.storeLineItems([("r1", Self.refund)], for: "t1", at: Self.at)
        let buy = try #require(try ledger.money.lineItem("b1", bundleId: "com.example", environment: .production))
        #expect(buy.amountTaxInclusive == 23800 && buy.pricingAmount == 23800 && buy.pricingAmountSource == .reported)
        #expect(buy.provider == "backend" && buy.productId == "pro" && buy.acceptedAt == nil)
        #expect(buy.classification.regimeId == "test" && buy.classification.commission == 3000)
        let refund = try #require(try ledger.money.lineItem("r1", bundleId: "com.example", environment: .production))
        #expect(refund.productId == "pro" && refund.classification.commission == -1500)
        var totals = try #require(try ledger.money.totals(fromDay: Self.day, untilDay: Self.day + 2).first)
        #expect(totals.sales == 1 && totals.salesAmount == 23800 && totals.refundsAmount == 11900)
        #expect(totals.netAmount == 11900 && totals.netTax == 1900 && totals.commission == 1500)

        // Restated: only the latest version counts, in the row and in the roll-up.
        try ledger.reports.storeLineItems(
            [("b1", Self.buy("b1", inclusive: 17850, tax: 2850, restated: true))],
            for: "t1",
            at: Self.at
        )
        totals = try #require(try ledger.money.totals(fromDay: Self.day, untilDay: Self.day + 2).first)
        #expect(totals.sales == 1 && totals.salesAmount == 17850 && totals.commission == 2250 - 1500)

        // Reported and accepted: the row carries the report and Apple's acceptance.
        let row = try #require(try ledger.reports.lineItems(for: "t1").last?.rowId)
        try ledger.reports.enqueueReport(
            StoredReport(
                requestIdentifier: "req-1",
                externalPurchaseId: "t1",
                environment: .production,
                bundleId: "com.example",
                status: .lineItem,
                body: "{}",
                nextAttemptAt: 0,
                createdAt: Self.at
            ),
            lineItemRows: [row]
        )
        try ledger.reports.recordAttempt(
            "req-1",
            ReportAttempt(state: .accepted, httpStatus: 200, response: nil, nextAttemptAt: 0, at: Self.at + 5)
        )
        let accepted = try #require(try ledger.money.lineItem("b1", bundleId: "com.example", environment: .production))
        #expect(accepted.reportRequestIdentifier == "req-1" && accepted.acceptedAt == Self.at + 5)
        #expect(try ledger.money.acceptance(from: 0, until: Int64.max) == (2, 1))

        // Retracted: the row stays, flagged, and counts nowhere.
        try ledger.reports.storeLineItems(
            [("b1", Self.buy("b1", inclusive: 17850, tax: 2850, restated: true, retracted: true))],
            for: "t1",
            at: Self.at
        )
        let retracted = try #require(try ledger.money.lineItem("b1", bundleId: "com.example", environment: .production))
        #expect(retracted.retracted && retracted.classification.commission == 0 && retracted.acceptedAt == nil)
        totals = try #require(try ledger.money.totals(fromDay: Self.day, untilDay: Self.day + 2).first)
        #expect(totals.sales == 0 && totals.salesAmount == 0 && totals.refunds == 1 && totals.refundsAmount == 11900)
        #expect(try ledger.money.acceptance(from: 0, until: Int64.max) == (1, 0))
    }

    @Test func aRebuildUnderNewRegimesMatchesTheIncrementalFigures() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try Self.open(folder)
        defer { ledger.close() }
        try ledger.reports.storeLineItems([("b1", Self.buy("b1", inclusive: 23800, tax: 3800))], for: "t1", at: Self.at)
        try ledger.reports.storeLineItems([("r1", Self.refund)], for: "t1", at: Self.at)
        let before = try ledger.money.days(fromDay: 0, untilDay: Self.day + 10)
        #expect(before.map(\.commission) == [0, 0])
        #expect(try ledger.money.useRegimes([Self.regime]))
        #expect(!(try ledger.money.useRegimes([Self.regime])))
        let after = try ledger.money.days(fromDay: 0, untilDay: Self.day + 10)
        #expect(after.map(\.commission) == [3000, -1500])
        #expect(after.map(\.salesAmount) == before.map(\.salesAmount))
        let items = try ledger.money.lineItems(from: 0, until: Int64.max, limit: 1)
        let next = try ledger.money.lineItems(from: 0, until: Int64.max, after: items.last, limit: 10)
        #expect(items.map(\.lineItemId) + next.map(\.lineItemId) == ["b1", "r1"])
    }

    /// A ledger from before the money tables: migration 17 fills them from the line items already stored.
    @Test func theMigrationFillsTheMoneyRowsFromTheLineItemsAlreadyStored() throws {
        let folder = LedgerTests.TemporaryFolder()
        do {
            let ledger = try Self.open(folder)
            defer { ledger.close() }
            try ledger.reports.storeLineItems(
                [("b1", Self.buy("b1", inclusive: 23800, tax: 3800))],
                for: "t1",
                at: Self.at
            )
            try ledger.reports.storeLineItems([("r1", Self.refund)], for: "t1", at: Self.at)
            try ledger.database.writer.write { connection throws(StorageError) in
                try connection.execute(
                    """
                    DROP TABLE money_daily; DROP TABLE money_line_items;
                    DELETE FROM schema_migrations WHERE version IN (17, 20)
                    """
                )
            }
        }
        let upgraded = try LedgerTests.open(folder)
        defer { upgraded.close() }
        let totals = try #require(try upgraded.money.totals(fromDay: Self.day, untilDay: Self.day + 2).first)
        #expect(totals.sales == 1 && totals.salesAmount == 23800 && totals.refundsAmount == 11900)
        let refund = try #require(try upgraded.money.lineItem("r1", bundleId: "com.example", environment: .production))
        #expect(refund.productId == "pro" && refund.amountTaxInclusive == 11900)
    }

    /// A start that stopped after the migrations but before the money rows were made (no regimes recorded for
    /// them) makes them at the next start.
    @Test func moneyRowsNeverMadeAreMadeAtTheNextStart() throws {
        let folder = LedgerTests.TemporaryFolder()
        do {
            let ledger = try Self.open(folder)
            defer { ledger.close() }
            try ledger.reports.storeLineItems(
                [("b1", Self.buy("b1", inclusive: 23800, tax: 3800))],
                for: "t1",
                at: Self.at
            )
            try ledger.database.writer.write { connection throws(StorageError) in
                try connection.execute(
                    """
                    DELETE FROM money_daily; DELETE FROM money_line_items;
                    DELETE FROM settings WHERE name = 'money_regimes'
                    """
                )
            }
        }
        let reopened = try LedgerTests.open(folder)
        defer { reopened.close() }
        let totals = try #require(try reopened.money.totals(fromDay: Self.day, untilDay: Self.day + 2).first)
        #expect(totals.sales == 1 && totals.salesAmount == 23800)
    }

    /// A restatement Apple refuses is set aside: Apple still holds the version it accepted, and so do the money
    /// rows and the roll-up.
    @Test func aRestatementAppleRefusesLeavesTheAcceptedVersionCounting() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try Self.open(folder)
        defer { ledger.close() }
        func report(_ id: String) throws {
            let row = try #require(try ledger.reports.lineItems(for: "t1").last?.rowId)
            try ledger.reports.enqueueReport(
                StoredReport(
                    requestIdentifier: RequestIdentifier(id),
                    externalPurchaseId: "t1",
                    environment: .production,
                    bundleId: "com.example",
                    status: .lineItem,
                    body: "{}",
                    nextAttemptAt: 0,
                    createdAt: Self.at
                ),
                lineItemRows: [row]
            )
        }
        try ledger.reports.storeLineItems([("b1", Self.buy("b1", inclusive: 23800, tax: 3800))], for: "t1", at: Self.at)
        try report("req-1")
        try ledger.reports.recordAttempt(
            "req-1",
            ReportAttempt(state: .accepted, httpStatus: 200, response: nil, nextAttemptAt: 0, at: Self.at)
        )
        try ledger.reports.storeLineItems(
            [("b1", Self.buy("b1", inclusive: 17850, tax: 2850, restated: true))],
            for: "t1",
            at: Self.at
        )
        try report("req-2")
        #expect(try ledger.money.totals(fromDay: Self.day, untilDay: Self.day + 1).first?.salesAmount == 17850)
        try ledger.reports.recordRejection(
            "req-2",
            ReportAttempt(state: .rejected, httpStatus: 400, response: "{}", nextAttemptAt: 0, at: Self.at),
            rewrite: ReportRewrite(setAside: ["b1": "IncorrectNetAmountError"])
        )
        let item = try #require(try ledger.money.lineItem("b1", bundleId: "com.example", environment: .production))
        #expect(
            item.amountTaxInclusive == 23800 && item.reportRequestIdentifier == "req-1" && item.acceptedAt == Self.at
        )
        #expect(try ledger.money.totals(fromDay: Self.day, untilDay: Self.day + 1).first?.salesAmount == 23800)
    }

    /// A report Apple refused naming its item, sent again as it was (Apple's notice of an unreported token) and
    /// accepted this time: Apple holds the item, so it is accepted and counted, and no longer needs a person
    /// (before, it stayed set aside, and retracting it dropped it here without a word to Apple).
    @Test func anItemSetAsideThatAReportAppleAcceptsStillCarriesIsAccepted() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try Self.open(folder)
        defer { ledger.close() }
        let buy = Self.buy("b1", inclusive: 23800, tax: 3800)
        try ledger.reports.storeLineItems([("b1", buy)], for: "t1", at: Self.at)
        let row = try #require(try ledger.reports.lineItems(for: "t1").last?.rowId)
        try ledger.reports.enqueueReport(
            StoredReport(
                requestIdentifier: "req-1",
                externalPurchaseId: "t1",
                environment: .production,
                bundleId: "com.example",
                status: .lineItem,
                body: #"{"requestIdentifier":"req-1","externalPurchaseId":"t1","status":"LINE_ITEM","lineItems":["#
                    + buy + "]}",
                nextAttemptAt: 0,
                createdAt: Self.at
            ),
            lineItemRows: [row]
        )
        try ledger.reports.recordRejection(
            "req-1",
            ReportAttempt(state: .rejected, httpStatus: 400, response: "{}", nextAttemptAt: 0, at: Self.at),
            rewrite: ReportRewrite(setAside: ["b1": "SomeError"])
        )
        #expect(try ledger.reports.attentionCount() == 1)
        #expect(try ledger.money.totals(fromDay: Self.day, untilDay: Self.day + 1).first?.salesAmount ?? 0 == 0)
        _ = try ledger.reports.reviveRejectedReport(for: "t1", now: Self.at + 1)
        try ledger.reports.recordAttempt(
            "req-1",
            ReportAttempt(state: .accepted, httpStatus: 200, response: nil, nextAttemptAt: 0, at: Self.at + 2)
        )
        #expect(try ledger.reports.lineItems(for: "t1").first?.correction == nil)
        let money = try #require(try ledger.money.lineItem("b1", bundleId: "com.example", environment: .production))
        #expect(money.acceptedAt == Self.at + 2 && money.reportRequestIdentifier == "req-1")
        #expect(try ledger.reports.attentionCount() == 0)
        #expect(try ledger.money.totals(fromDay: Self.day, untilDay: Self.day + 1).first?.salesAmount == 23800)
    }

    /// Apple's notification corrects a token's `tokenCreationDate`: its line items are classified again from the
    /// corrected tap (here the buy falls outside the 7-day window).
    @Test func aTokenAppleCorrectsIsClassifiedAgain() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try Self.open(folder)
        defer { ledger.close() }
        var regime = Self.regime
        regime.windowDays = 7
        try ledger.money.useRegimes([regime])
        // The token recorded by `open` was created 2024-01-25; the buy is dated 2025-11-08: outside the window.
        try ledger.reports.storeLineItems([("b1", Self.buy("b1", inclusive: 23800, tax: 3800))], for: "t1", at: Self.at)
        var item = try #require(try ledger.money.lineItem("b1", bundleId: "com.example", environment: .production))
        #expect(!item.classification.commissionable && item.classification.commission == 0)
        var apple = LedgerTests.token("t1", source: .notification)
        apple.token.tokenCreationDate = Self.at - Milliseconds.days(2)
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
        #expect(applied?.corrections.map(\.field) == ["tokenCreationDate"])
        item = try #require(try ledger.money.lineItem("b1", bundleId: "com.example", environment: .production))
        #expect(item.classification.commissionable && item.classification.daysFromTap == 2)
        #expect(try ledger.money.totals(fromDay: Self.day, untilDay: Self.day + 1).first?.commission == 3000)
    }
}
