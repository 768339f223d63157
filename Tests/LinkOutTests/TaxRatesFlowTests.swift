import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Payments
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// Stripe without Stripe Tax charges the catalog's price as it is. Before, Apple got that whole price as
/// tax-exclusive (tax 0) and the commission was estimated on it; with `payments.taxRates` the tax is split out of
/// the tax-inclusive price by the billing country's rate, and a live key without it refuses to start.
@Suite("Tax rates")
struct TaxRatesFlowTests {
    static func buy(_ harness: PaymentHarness, country: String, session: String = "cs_test_fake1") throws
        -> [String: Any]
    {
        let checkout = try harness.openCheckout()
        #expect(try harness.choose(checkout, product: "pro.lifetime", currency: "EUR").status == 303)
        let completed = StripeEvents.sessionCompleted(
            id: "evt_\(session)",
            session: session,
            checkout: checkout,
            product: "pro.lifetime",
            total: 2999,
            tax: 0,
            country: country,
            paymentIntent: "pi_\(session)"
        )
        #expect(try harness.deliver(completed).status == 200)
        try harness.waitForEvents()
        return try #require(harness.reportedLineItems().last)
    }

    @Test func taxIncludedInThePriceIsSplitOutByTheBillingCountrysRate() throws {
        var rates = TaxRates.standard
        rates.basisPoints["ESP"] = 1000
        let harness = try PaymentHarness(provider: .stripe) { $0.payments.taxRates = rates }
        // Germany, 19 %: 29.99 = 25.20 + 4.79.
        let german = try Self.buy(harness, country: "DE")
        #expect(german["taxCountry"] as? String == "DEU")
        #expect(german["amountTaxInclusive"] as? Int == 29990)
        #expect(german["taxAmount"] as? Int == 4790)
        #expect(german["amountTaxExclusive"] as? Int == 25200)
        #expect(german["netAmountTaxExclusive"] as? Int == 25200)
        // Spain at the operator's own 10 %: 29.99 = 27.26 + 2.73.
        let spanish = try Self.buy(harness, country: "ES", session: "cs_test_fake2")
        #expect(spanish["taxAmount"] as? Int == 2730)
        // A country without a rate (the United States): no tax split out.
        let american = try Self.buy(harness, country: "US", session: "cs_test_fake3")
        #expect(american["taxAmount"] as? Int == 0)
        #expect(harness.apple.apple.received.allSatisfy { $0.problems.isEmpty })
    }

    /// A renewal's invoice without Stripe Tax: its total is split the same way; an invoice without a billing
    /// address is split at the rate of the country its line item is reported under (the subscription's).
    @Test(arguments: [("DE", true, 640, 3350), ("FR", false, 670, 3320)])
    func aRenewalsTaxIsSplitOutToo(country: String, invoiceNamesIt: Bool, tax: Int, exclusive: Int) throws {
        let harness = try PaymentHarness(provider: .stripe) { $0.payments.taxRates = .standard }
        let checkout = try harness.openCheckout()
        #expect(try harness.choose(checkout, product: "pro.monthly", currency: "EUR").status == 303)
        let start = StripeEvents.sessionCompleted(
            id: "evt_start",
            session: "cs_test_fake1",
            checkout: checkout,
            product: "pro.monthly",
            mode: "subscription",
            total: 399,
            tax: 0,
            country: country,
            subscription: "sub_1"
        )
        #expect(try harness.deliver(start).status == 200)
        try harness.waitForEvents()
        let now = Clock.system.nowSeconds()
        var renewal = StripeEvents.renewal(
            id: "evt_in_2",
            invoice: "in_2",
            subscription: "sub_1",
            total: 399,
            start: now,
            end: now + 30 * 86_400,
            paymentIntent: "pi_in_2"
        )
        if !invoiceNamesIt {
            renewal = renewal.replacingOccurrences(of: #""customer_address":{"country":"DE"},"#, with: "")
        }
        #expect(try harness.deliver(renewal).status == 200)
        try harness.waitForEvents()
        let items = harness.reportedLineItems()
        #expect(items.count == 2)
        // 3.99 at 19 % is 3.35 + 0.64, at 20 % 3.32 + 0.67 (0.665 rounded half up in cents): the start and the renewal alike.
        #expect(items.map { $0["taxAmount"] as? Int } == [tax, tax])
        #expect(items.map { $0["amountTaxExclusive"] as? Int } == [exclusive, exclusive])
        #expect(Set(items.compactMap { $0["taxCountry"] as? String }).count == 1)
        #expect(harness.apple.apple.received.allSatisfy { $0.problems.isEmpty })
    }

    @Test func withoutRatesATestKeyReportsTheTaxAsStripeGaveIt() throws {
        let harness = try PaymentHarness(provider: .stripe)
        #expect(try Self.buy(harness, country: "DE")["taxAmount"] as? Int == 0)
    }

    @Test func aLiveKeyWithoutStripeTaxOrRatesRefusesToStart() throws {
        var configuration = try Configuration.parse(
            Data(
                #"{"payments": {"provider": "stripe", "stripe": {"secretKey": "sk_live_x", "webhookSecret": "whsec_x"}}}"#
                    .utf8
            )
        )
        #expect(throws: ConfigurationError.self) { _ = try configuration.payments.makeProvider(clock: .system) }
        do {
            _ = try configuration.payments.makeProvider(clock: .system)
        } catch {
            #expect(error.field == "payments.taxRates")
        }
        configuration.payments.taxRates = .standard
        #expect(try configuration.payments.makeProvider(clock: .system).chargesTax == false)
        configuration.payments[.stripe, "automaticTax"] = "true"
        configuration.payments.taxRates = nil
        #expect(try configuration.payments.makeProvider(clock: .system).chargesTax)
    }

    @Test(arguments: [
        (#"{"payments": {"taxRates": "some"}}"#, "payments.taxRates"),
        (#"{"payments": {"taxRates": {"DE": "19"}}}"#, "payments.taxRates.DE"),
        (#"{"payments": {"taxRates": {"DEU": "19.555"}}}"#, "payments.taxRates.DEU"),
        (#"{"payments": {"taxRates": {"DEU": "-1"}}}"#, "payments.taxRates.DEU"),
        (#"{"payments": {"taxRates": {"DEU": "101"}}}"#, "payments.taxRates.DEU"),
    ])
    func mistakesNameTheirField(json: String, field: String) {
        do {
            _ = try Configuration.parse(Data(json.utf8))
            Issue.record("accepted \(json)")
        } catch {
            #expect(error.field == field)
        }
    }

    @Test func ratesReadAsConfigured() throws {
        let standard = try Configuration.parse(Data(#"{"payments": {"taxRates": "standard"}}"#.utf8))
        #expect(standard.payments.taxRates == .standard)
        let none = try Configuration.parse(Data(#"{"payments": {"taxRates": "none"}}"#.utf8))
        #expect(none.payments.taxRates == TaxRates.none)
        let own = try Configuration.parse(Data(#"{"payments": {"taxRates": {"DEU": "7", "FRA": "0"}}}"#.utf8))
        #expect(own.payments.taxRates?.basisPoints["DEU"] == 700)
        #expect(own.payments.taxRates?.includedTax(in: 2999, country: "FR") == 0)
        #expect(own.payments.taxRates?.basisPoints["FIN"] == 2550)
        #expect(TaxRates.standard.includedTax(in: 2999, country: "DE") == 479)
        #expect(TaxRates.standard.includedTax(in: 500, country: "JPN") == 45)
    }
}
