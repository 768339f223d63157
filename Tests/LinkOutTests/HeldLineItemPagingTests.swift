import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Logging
import Payments
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// Held line items and held payment events are tried page by page by key until all were: those that cannot go
/// on yet, however many, never keep the ones behind them from being placed or released.
@Suite("Held line items and events are paged by key")
struct HeldLineItemPagingTests {
    static let account = PaymentHarness.account

    static func buy(_ id: String, at creationDate: Int64) -> String {
        """
        {"amountTaxExclusive":1000,"amountTaxInclusive":1000,"creationDate":\(creationDate),"eventType":"BUY",\
        "lineItemId":"\(id)","netAmountTaxExclusive":1000,"pricingCurrency":"EUR","productIdentifier":"pro",\
        "productType":"ONE_TIME_BUY","quantity":1,"reportingCurrency":"EUR","taxAmount":0,"taxCountry":"DEU"}
        """
    }

    @Test func aHeldItemBehindAFullPageOfUnplaceableOnesIsPlaced() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-paging-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let ledger = try Ledger(directory: folder.path)
        defer { ledger.close() }
        let now = Clock.system.nowMilliseconds()
        let day: Int64 = 86_400_000
        // The purchase's token expired nine days ago; the customer's other token is active since yesterday.
        let purchase = PaymentHarness.servicesToken(createdAt: now - 10 * day, expiresAt: now - 9 * day)
        let active = PaymentHarness.servicesToken(createdAt: now - day, expiresAt: now + 365 * day)
        for (token, checkout) in [(purchase, "c1"), (active, "c2")] {
            let fields = TokenFields(
                token,
                source: .app,
                appAccountToken: Self.account
            )
            _ = try ledger.tokens.recordForwardedToken(fields, checkoutId: CheckoutID(checkout), at: now)
        }
        // Three items dated when no token of the customer was active, then one dated an hour ago.
        var change = PaymentChange(event: nil, outcome: "held", at: now)
        change.lineItemsAwaitingToken =
            ["early1", "early2", "early3"].map {
                (purchase.externalPurchaseId, LineItemID($0), Self.buy($0, at: now - 5 * day))
            } + [(purchase.externalPurchaseId, "late", Self.buy("late", at: now - 3_600_000))]
        try ledger.payments.apply(change)

        let placed = try LineItemPlacement(ledger: ledger).placeAwaitingToken(pageSize: 2)
        #expect(placed.map(\.item.lineItemId) == ["late"])
        #expect(placed.map(\.token) == [active.externalPurchaseId])
        #expect(
            try ledger.reports.lineItemsAwaitingToken(limit: 10).map(\.lineItemId) == ["early1", "early2", "early3"]
        )
        #expect(try ledger.reports.lineItemsAwaitingToken(after: 2, limit: 10).map(\.rowId).allSatisfy { $0 > 2 })
    }

    static func rates(kwd: String?, bhd: String?) -> Data {
        func entry(_ currency: String, _ day: String?) -> String {
            #""\#(currency)": {"reportingCurrency": "USD", "rates": {"\#(day ?? "2020-01-01")": "3.2510"}}"#
        }
        return Data("{\(entry("KWD", kwd)), \(entry("BHD", bhd))}".utf8)
    }

    @Test func aHeldEventBehindAFullPageOfEventsStillWaitingIsReleased() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-rates-\(UUID()).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Self.rates(kwd: nil, bhd: nil).write(to: file)
        let harness = try PaymentHarness(provider: .stripe) { configuration in
            configuration.catalog = [
                Product(
                    id: "pro.lifetime",
                    kind: .oneTime,
                    names: ["en": "Pro forever"],
                    prices: [
                        "KWD": Money(currency: "KWD", decimal: "5.120"),
                        "BHD": Money(currency: "BHD", decimal: "6.250"),
                    ].compactMapValues { $0 }
                )
            ]
            configuration.payments.exchangeRatesFile = file.path
        }
        // Two sales in dinars of Kuwait, then one in dinars of Bahrain, each on its own token: all held.
        for (index, (currency, total)) in [("KWD", 5120), ("KWD", 5120), ("BHD", 6250)].enumerated() {
            let checkout = try harness.openCheckout()
            #expect(try harness.choose(checkout, product: "pro.lifetime", currency: currency).status == 303)
            let completed = StripeEvents.sessionCompleted(
                id: "evt_\(index + 1)",
                session: "cs_test_fake\(index + 1)",
                checkout: checkout,
                product: "pro.lifetime",
                currency: currency.lowercased(),
                total: Int64(total),
                tax: 0,
                country: "KW",
                paymentIntent: "pi_\(index + 1)"
            )
            #expect(try harness.deliver(completed).status == 200)
            try harness.waitForEvents()
        }
        let ledger = harness.live.application.ledger
        #expect(try ledger.payments.heldPaymentEvents().map(\.event.eventId) == ["evt_1", "evt_2", "evt_3"])

        // Bahrain's rate arrives; Kuwait's does not. A pass reading one held event at a time releases the third.
        try Self.rates(kwd: nil, bhd: ExchangeRateTable.dayText(Clock.system.nowMilliseconds())).write(to: file)
        let processor = PaymentEventProcessor(
            ledger: ledger,
            mapper: harness.live.application.payments.mapper,
            providers: [harness.live.application.payments.provider],
            logger: Logger(label: "test", level: .critical),
            clock: .system,
            intervalMilliseconds: 30_000,
            heldPageSize: 1,
            onChange: {}
        )
        #expect(processor.processPending() == 1)
        #expect(try ledger.payments.heldPaymentEvents().map(\.event.eventId) == ["evt_1", "evt_2"])
        #expect(
            try ledger.reports.lineItems(
                for: try #require(ledger.payments.purchase(id: "cs_test_fake3")?.externalPurchaseId)
            )
            .map(\.lineItemId) == ["cs_test_fake3"]
        )
    }
}
