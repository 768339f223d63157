import Domain
import ExternalPurchase
import Foundation
import Payments
import TestSupport
import Testing

@testable import LinkOut

/// Payment facts → Apple line items, checked with Apple's rules (`ReportValidator`) and worked numbers.
@Suite("AppleLineItems")
struct AppleLineItemsTests {
    let mapper = AppleLineItems(fallbackTaxCountry: "DEU")
    /// 2025-11-30T10:53:20Z.
    static let paidAt: Int64 = 1_764_500_000_000

    static func purchase(
        mode: PurchaseCompletion.Mode = .payment,
        currency: String = "EUR",
        total: Int64 = 2999,
        tax: Int64 = 479,
        country: String? = "DE"
    ) -> PurchaseCompletion {
        PurchaseCompletion(
            sessionId: "cs_test_a1",
            checkoutId: "chk_abc",
            externalPurchaseId: "0000-epid",
            bundleId: "com.example",
            productId: "pro.lifetime",
            mode: mode,
            currency: CurrencyCode(currency),
            amountSubtotal: total,
            amountTax: tax,
            amountTotal: total,
            customerCountry: country,
            paymentIntentId: "pi_123",
            completedAt: paidAt
        )
    }

    /// Apple's local checks for `items` sent after `earlier`; no problems expected.
    func expectValid(_ items: [LineItem], after earlier: [LineItem] = [], now: Int64 = paidAt + 90 * 86_400_000) {
        let report = ExternalPurchaseReport(
            requestIdentifier: RequestIdentifier(UUID().uuidString),
            externalPurchaseId: "0000-epid",
            status: .lineItem,
            lineItems: items
        )
        let problems = ReportValidator(token: nil, earlierLineItems: earlier, now: now).problems(in: report)
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test func aOneTimePurchaseInEuro() throws {
        let item = try mapper.oneTimeBuy(Self.purchase())
        #expect(item.lineItemId == "cs_test_a1")
        #expect(item.creationDate == Self.paidAt)
        #expect(item.eventType == "BUY")
        #expect(item.productType == "ONE_TIME_BUY")
        #expect(item.productIdentifier == "pro.lifetime")
        #expect(item.quantity == 1)
        #expect(item.amountTaxInclusive == 29990)
        #expect(item.taxAmount == 4790)
        #expect(item.amountTaxExclusive == 25200)
        #expect(item.netAmountTaxExclusive == 25200)
        #expect(item.pricingCurrency == "EUR")
        #expect(item.reportingCurrency == "EUR")
        #expect(item.exchangeRate == nil)
        #expect(item.taxCountry == "DEU")
        expectValid([.oneTimeBuy(item)])
    }

    @Test func yenWithoutTaxAndTheFallbackCountry() throws {
        let item = try mapper.oneTimeBuy(Self.purchase(currency: "jpy", total: 500, tax: 0, country: nil))
        #expect(item.amountTaxInclusive == 500_000)
        #expect(item.amountTaxExclusive == 500_000)
        #expect(item.pricingCurrency == "JPY")
        #expect(item.reportingCurrency == "JPY")
        #expect(item.taxCountry == "DEU")
        expectValid([.oneTimeBuy(item)])
        let unknown = try mapper.oneTimeBuy(Self.purchase(country: "XK"))
        #expect(unknown.taxCountry == "DEU")
        #expect(throws: AppleLineItemError.unknownTaxCountry("EU")) {
            try AppleLineItems(fallbackTaxCountry: "EU").oneTimeBuy(Self.purchase(country: nil))
        }
    }

    @Test func aCurrencyAppleDoesNotReportInNeedsARate() throws {
        let dinar = Self.purchase(currency: "kwd", total: 5120, tax: 0, country: "KW")
        #expect(throws: AppleLineItemError.exchangeRateRequired(currency: "KWD")) { try mapper.oneTimeBuy(dinar) }
        let item = try mapper.oneTimeBuy(dinar, exchangeRate: ExchangeRate(reportingCurrency: "USD", rate: "3.25"))
        #expect(item.pricingCurrency == "KWD")
        #expect(item.reportingCurrency == "USD")
        #expect(item.exchangeRate == DecimalNumber("3.25"))
        #expect(item.amountTaxInclusive == 16640)  // 5.120 KWD × 3.25 = 16.64 USD
        #expect(item.taxCountry == "KWT")
        expectValid([.oneTimeBuy(item)])
        #expect(throws: AppleLineItemError.invalidExchangeRate("3.25")) {
            try mapper.oneTimeBuy(dinar, exchangeRate: ExchangeRate(reportingCurrency: "GBP", rate: "3.25"))
        }
        #expect(throws: AppleLineItemError.invalidExchangeRate("-1")) {
            try mapper.oneTimeBuy(dinar, exchangeRate: ExchangeRate(reportingCurrency: "USD", rate: "-1"))
        }
        // ISK: Stripe's two decimals, a rate to EUR; 500 minor = 5 kr.
        let krona = try mapper.oneTimeBuy(
            Self.purchase(currency: "ISK", total: 50_000, tax: 9_677, country: "IS"),
            exchangeRate: ExchangeRate(reportingCurrency: "EUR", rate: "0.0071")
        )
        #expect(krona.amountTaxInclusive == 3550)  // 500 kr × 0.0071 = 3.55 EUR
        #expect(krona.taxAmount == 687)  // 96.77 kr × 0.0071 = 0.687067 EUR
        #expect(krona.amountTaxExclusive == 2863)
        expectValid([.oneTimeBuy(krona)])
    }

    @Test func aSubscriptionStartsRenewsAndAccumulatesPaidDays() throws {
        let january31 = Int64(1_769_817_600_000)  // 2026-01-31T00:00:00Z
        var purchase = Self.purchase(mode: .subscription, total: 999, tax: 160)
        purchase.completedAt = january31
        purchase.productId = "pro.monthly"
        #expect(throws: AppleLineItemError.missingPeriod) { try mapper.subscriptionStart(purchase) }
        let start = try mapper.subscriptionStart(
            purchase,
            period: SubscriptionPeriod(start: january31, interval: BillingInterval(.month))
        )
        #expect(start.subscriptionEvent == "SUBSCRIPTION_START")
        #expect(start.subscriptionDaysOfPaidService == 0)
        #expect(start.subscriptionStartDate == january31)
        #expect(start.subscriptionEndDate == 1_772_236_800_000)  // 2026-02-28: a month from 31 January
        #expect(start.referenceLineItemId == nil)
        #expect(start.amountTaxInclusive == 9990)

        let february = InvoicePayment(
            invoiceId: "in_feb",
            subscriptionId: "sub_123",
            billingReason: "subscription_cycle",
            externalPurchaseId: "0000-epid",
            bundleId: "com.example",
            productId: "pro.monthly",
            currency: "EUR",
            totalExcludingTax: 839,
            tax: 160,
            total: 999,
            amountPaid: 999,
            period: SubscriptionPeriod(start: 1_772_236_800_000, end: 1_774_656_000_000),
            customerCountry: nil,
            paymentIntentId: "pi_feb",
            paidAt: 1_772_236_800_000
        )
        let first = try mapper.renewal(february, previous: start)
        #expect(first.lineItemId == "in_feb")
        #expect(first.subscriptionEvent == "RENEWAL")
        #expect(first.referenceLineItemId == start.lineItemId)
        #expect(first.subscriptionDaysOfPaidService == 28)
        #expect(first.taxCountry == "DEU")
        #expect(first.amountTaxExclusive == 8390)
        // An invoice stamped before the start it follows (clocks apart, or an event made by hand) is dated with
        // the start: Apple refuses a renewal dated before the item it references.
        var stampedEarly = february
        stampedEarly.paidAt = start.creationDate - 1_800_000
        let clamped = try mapper.renewal(stampedEarly, previous: start)
        #expect(clamped.creationDate == start.creationDate)
        expectValid([.subscriptionBuy(start), .subscriptionBuy(clamped)], now: start.creationDate + 1000)
        // Following a renewal, the start is named to it.
        let afterRenewal = try mapper.renewal(stampedEarly, previous: first, startedAt: start.creationDate)
        #expect(afterRenewal.creationDate == start.creationDate)

        var march = february
        march.invoiceId = "in_mar"
        march.period = SubscriptionPeriod(start: 1_774_656_000_000, end: 1_777_334_400_000)
        march.paidAt = march.period.start
        let second = try mapper.renewal(march, previous: first)
        #expect(second.referenceLineItemId == start.lineItemId)
        #expect(second.subscriptionDaysOfPaidService == 28 + 28)
        expectValid(
            [.subscriptionBuy(start), .subscriptionBuy(first), .subscriptionBuy(second)],
            now: march.paidAt + 1000
        )
        // March paid a second time (a re-bill, a dunning retry's new invoice): the same period is one period of
        // service, never counted twice (it was: 28 + 28 + 28, and the next renewal's days ran a month ahead).
        var again = march
        again.invoiceId = "in_mar_again"
        let repaid = try mapper.renewal(again, previous: second)
        #expect(repaid.subscriptionDaysOfPaidService == second.subscriptionDaysOfPaidService)
        // A renewal starting before the period it follows ends by linkout's reckoning (a Stripe start's end is
        // its completion plus the interval, late when its event was) follows the whole period all the same.
        var early = february
        early.invoiceId = "in_feb_early"
        early.period = SubscriptionPeriod(start: 1_772_236_800_000 - 7_200_000, end: 1_774_656_000_000)
        #expect(try mapper.renewal(early, previous: start).subscriptionDaysOfPaidService == 28)
    }

    /// A daily plan's first renewal starts a few seconds short of a day after linkout's estimate of the start
    /// (Stripe anchors the period before the checkout's event): it follows the day, which is paid service; a
    /// re-bill of the same day, seconds after it, adds nothing.
    @Test func aDailyPlansFirstRenewalFollowsItsDay() throws {
        let start = try mapper.subscriptionStart(
            Self.purchase(mode: .subscription, total: 99, tax: 0),
            period: SubscriptionPeriod(start: Self.paidAt, interval: BillingInterval(.day))
        )
        let renewal = (start: Self.paidAt + 86_400_000 - 5_000, isChange: false)
        #expect(AppleLineItems.paidDays(after: start, paid: true, next: renewal) == 1)
        #expect(AppleLineItems.paidDays(after: start, paid: true, next: (Self.paidAt + 5_000, isChange: false)) == 0)
    }

    /// A period restated through the API may span any two Int64 dates: its days are clamped, never a trap.
    @Test func paidDaysOfAPeriodAtInt64sEndsAreClamped() throws {
        #expect(SubscriptionPeriod(start: .min, end: .max).days == .max)
        #expect(SubscriptionPeriod(start: .max, end: .min).days == 0)
        var previous = try mapper.subscriptionStart(
            Self.purchase(mode: .subscription, total: 999, tax: 160),
            period: SubscriptionPeriod(start: Self.paidAt, interval: BillingInterval(.month))
        )
        (previous.subscriptionStartDate, previous.subscriptionEndDate) = (.max - 1, .max)
        #expect(AppleLineItems.paidDays(after: previous, paid: true, next: (.max, isChange: false)) == 0)
        (previous.subscriptionStartDate, previous.subscriptionEndDate) = (-1, .max)
        #expect(AppleLineItems.paidDays(after: previous, paid: true, next: (.min, isChange: false)) == 0)
        #expect(AppleLineItems.paidDays(after: previous, paid: true, next: (.max, isChange: true)) == .max)
    }

    @Test func aFreeFirstPeriodAddsNoPaidDays() throws {
        var trial = Self.purchase(mode: .subscription, total: 0, tax: 0)
        trial.period = SubscriptionPeriod(start: Self.paidAt, end: Self.paidAt + 14 * 86_400_000)
        let start = try mapper.subscriptionStart(trial)
        #expect(start.amountTaxInclusive == 0)
        let invoice = InvoicePayment(
            invoiceId: "in_after_trial",
            subscriptionId: "sub_1",
            billingReason: "subscription_cycle",
            externalPurchaseId: nil,
            bundleId: nil,
            productId: nil,
            currency: "EUR",
            totalExcludingTax: 839,
            tax: 160,
            total: 999,
            amountPaid: 999,
            period: SubscriptionPeriod(start: trial.period?.end ?? 0, end: (trial.period?.end ?? 0) + 30 * 86_400_000),
            customerCountry: "FR",
            paymentIntentId: nil,
            paidAt: trial.period?.end ?? 0
        )
        let renewal = try mapper.renewal(invoice, previous: start)
        #expect(renewal.subscriptionDaysOfPaidService == 0)
        #expect(renewal.productIdentifier == "pro.lifetime")
        #expect(renewal.taxCountry == "FRA")
        expectValid([.subscriptionBuy(start), .subscriptionBuy(renewal)], now: invoice.paidAt + 1000)
    }

    @Test func partialThenFullRefundsAddUpToTheBuy() throws {
        let buy = LineItem.oneTimeBuy(try mapper.oneTimeBuy(Self.purchase()))
        func refund(_ cumulative: Int64) -> ChargeRefund {
            ChargeRefund(
                chargeId: "ch_1",
                paymentId: "pi_123",
                amountRefunded: cumulative,
                currency: "eur",
                fullyRefunded: cumulative == 2999,
                refundedAt: Self.paidAt + 86_400_000
            )
        }
        let partial = try #require(try mapper.refund(refund(1000), of: buy, alreadyRefunded: 0))
        #expect(partial.lineItemId == "ch_1:refund:1000")
        #expect(partial.eventType == "REFUND")
        #expect(partial.referenceLineItemId == "cs_test_a1")
        #expect(partial.amountTaxInclusive == 10000)
        #expect(partial.taxAmount == 1597)  // 10000 × 4790 / 29990 = 1597.2
        #expect(partial.amountTaxExclusive == 8403)
        #expect(partial.netAmountTaxExclusive == 16797)
        #expect(partial.quantity == nil)
        #expect(partial.taxCountry == "DEU")
        expectValid([.refund(partial)], after: [buy])

        // A redelivery of the same event has nothing new, and the same event maps to the same id.
        #expect(try mapper.refund(refund(1000), of: buy, alreadyRefunded: 1000) == nil)
        #expect(try mapper.refund(refund(1000), of: buy, alreadyRefunded: 0)?.lineItemId == partial.lineItemId)

        let rest = try #require(try mapper.refund(refund(2999), of: buy, alreadyRefunded: 1000))
        #expect(rest.lineItemId == "ch_1:refund:2999")
        #expect(rest.amountTaxInclusive == 19990)
        #expect(rest.taxAmount == 3193)
        #expect(rest.amountTaxExclusive == 16797)
        #expect(rest.netAmountTaxExclusive == 0)
        #expect(partial.taxAmount + rest.taxAmount == buy.common.taxAmount)
        expectValid([.refund(rest)], after: [buy, .refund(partial)])
    }

    /// The provider's clock and the one that dated the buy differ by moments: a refund made at once must not come
    /// out before its buy (Apple: `ReferencedCreationDateIncompatibleError`).
    @Test func aRefundIsNeverDatedBeforeItsBuy() throws {
        let buy = LineItem.oneTimeBuy(try mapper.oneTimeBuy(Self.purchase()))
        let early = ChargeRefund(
            chargeId: "ch_1",
            paymentId: "pi_123",
            amountRefunded: 1000,
            currency: "eur",
            fullyRefunded: false,
            refundedAt: buy.common.creationDate - 2_000
        )
        let refund = try #require(try mapper.refund(early, of: buy, alreadyRefunded: 0))
        #expect(refund.creationDate == buy.common.creationDate)
        expectValid([.refund(refund)], after: [buy])
    }

    @Test func refundsFollowTheBuysCurrencyAndRate() throws {
        let dinar = Self.purchase(currency: "KWD", total: 5120, tax: 0, country: "KW")
        let buy = LineItem.oneTimeBuy(
            try mapper.oneTimeBuy(dinar, exchangeRate: ExchangeRate(reportingCurrency: "USD", rate: "3.25"))
        )
        let full = ChargeRefund(
            chargeId: "ch_k",
            paymentId: "pi_123",
            amountRefunded: 5120,
            currency: "kwd",
            fullyRefunded: true,
            refundedAt: Self.paidAt + 1000
        )
        let refund = try #require(try mapper.refund(full, of: buy, alreadyRefunded: 0))
        #expect(refund.amountTaxInclusive == buy.common.amountTaxInclusive)
        #expect(refund.exchangeRate == DecimalNumber("3.25"))
        #expect(refund.reportingCurrency == "USD")
        #expect(refund.netAmountTaxExclusive == 0)
        expectValid([.refund(refund)], after: [buy])

        var euro = full
        euro.currency = "EUR"
        #expect(throws: AppleLineItemError.currencyMismatch(buy: "KWD", refund: "EUR")) {
            try mapper.refund(euro, of: buy, alreadyRefunded: 0)
        }
        #expect(throws: AppleLineItemError.notABuy("ch_k:refund:5120")) {
            try mapper.refund(full, of: .refund(refund), alreadyRefunded: 0)
        }
    }

    @Test func aPurchaseWithoutProductCannotBeReported() {
        var purchase = Self.purchase()
        purchase.productId = nil
        #expect(throws: AppleLineItemError.missingProduct) { try mapper.oneTimeBuy(purchase) }
    }

    @Test func wideIntermediateArithmetic() {
        #expect(AppleLineItems.mulDivRounded(99_999_999_000, 99_999_999_000, 99_999_999_000) == 99_999_999_000)
        #expect(AppleLineItems.mulDivRounded(5, 1, 2) == 3)
        #expect(AppleLineItems.mulDivRounded(4, 1, 3) == 1)
        #expect(AppleLineItems.mulDivRounded(0, 7, 3) == 0)
    }
}

/// The demo provider: no keys, linkout's own page, and completions shaped like Stripe's.
@Suite("DemoPaymentProvider")
struct DemoPaymentProviderTests {
    let demo = DemoPaymentProvider(publicURL: "http://localhost:8080/", taxCountry: "AUT")

    @Test func redirectsToTheDemoPage() throws {
        let redirect = try demo.startCheckout(CheckoutRequest.example(intent: "int_42"))
        #expect(redirect.url == "http://localhost:8080/pay/demo/int_42")
        #expect(redirect.sessionId == "demo_int_42")
        #expect(demo.id == .demo)
        #expect(throws: PaymentError.self) {
            try demo.startCheckout(CheckoutRequest.example(intent: "../x"))
        }
    }

    @Test func aDemoCompletionBecomesAValidLineItem() throws {
        let request = CheckoutRequest.example(intent: "int_42")
        let completion = try demo.completion(of: request, at: AppleLineItemsTests.paidAt)
        #expect(completion.sessionId == "demo_int_42")
        #expect(completion.mode == .payment)
        #expect(completion.amountTotal == 2999)
        #expect(completion.amountTax == 0)
        #expect(completion.customerCountry == "AT")
        #expect(completion.externalPurchaseId == "0000-epid")
        let item = try AppleLineItems(fallbackTaxCountry: "DEU").oneTimeBuy(completion)
        #expect(item.taxCountry == "AUT")
        #expect(item.amountTaxInclusive == 29990)
        #expect(item.taxAmount == 0)

        let taxed = try demo.completion(of: request, at: AppleLineItemsTests.paidAt, tax: "5.00")
        #expect(taxed.amountTax == 500)
        #expect(throws: PaymentError.self) { try demo.completion(of: request, at: 0, tax: "30.00") }
    }

    @Test func aDemoSubscriptionHasItsFirstPeriod() throws {
        let request = CheckoutRequest.example(intent: "int_sub", kind: .subscription(BillingInterval(.year)))
        let completion = try demo.completion(of: request, at: AppleLineItemsTests.paidAt)
        #expect(completion.mode == .subscription)
        #expect(completion.subscriptionId == "demo_sub_int_sub")
        #expect(completion.period?.days == 365)
        let start = try AppleLineItems(fallbackTaxCountry: "DEU").subscriptionStart(completion)
        #expect(start.subscriptionEvent == "SUBSCRIPTION_START")
        #expect(start.subscriptionDaysOfPaidService == 0)
    }
}

extension AppleLineItemsTests {
    /// Apple's `exchangeRate` is a plain decimal (Apple: "exchangeRate"); a `Double` once wrote a UZS rate as
    /// `7.9e-05`.
    @Test func smallRatesGoToAppleAsPlainDecimals() throws {
        let som = Self.purchase(currency: "UZS", total: 12_000_000, tax: 0, country: "UZ")
        let item = try mapper.oneTimeBuy(som, exchangeRate: ExchangeRate(reportingCurrency: "EUR", rate: "0.0000790"))
        #expect(item.exchangeRate?.text == "0.000079")
        #expect(item.amountTaxInclusive == 9480)  // 120,000.00 UZS × 0.000079 = 9.48 EUR
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let body = String(decoding: try encoder.encode(LineItem.oneTimeBuy(item)), as: UTF8.self)
        #expect(body.contains(#""exchangeRate":0.000079,"#))
        #expect(!body.contains("e-"))
        // Read back digit for digit: what was stored is what goes to Apple.
        let back = try JSONDecoder().decode(LineItem.self, from: Data(body.utf8))
        #expect(back.common.exchangeRate == DecimalNumber("0.000079"))
        expectValid([.oneTimeBuy(item)])
    }

    @Test(arguments: [
        ("0.000079", "0.000079"), ("3.2510", "3.251"), ("007", "7"), ("2.", "2"), (".5", "0.5"),
        ("0.00000000000000000000000001", "0.00000000000000000000000001"), ("-0.5", "-0.5"), ("-0", "0"),
    ])
    func decimalTextIsKeptPlain(text: String, canonical: String) throws {
        let number = try #require(DecimalNumber(text))
        #expect(number.text == canonical)
        let encoded = String(decoding: try JSONEncoder().encode([number]), as: UTF8.self)
        #expect(encoded == "[\(canonical)]")
        #expect(try JSONDecoder().decode([DecimalNumber].self, from: Data(encoded.utf8)) == [number])
    }

    @Test(arguments: ["", ".", "1e-5", "7.9e-05", "1,5", "0x10", " 1", "1.2.3", "+1", "NaN"])
    func onlyPlainDecimalTextIsANumber(text: String) {
        #expect(DecimalNumber(text) == nil)
        #expect(!ExchangeRate(reportingCurrency: "EUR", rate: text).isValid)
    }
}

/// Plan changes and chargebacks (Apple: "Reporting tokens with transactions", "SubscriptionBuyLineItem"):
/// `SUBSCRIPTION_CHANGE` with the paid days carried on, and a lost dispute as a `REFUND` of its buy.
extension AppleLineItemsTests {
    static let day: Int64 = 86_400_000

    func start() throws -> SubscriptionBuyLineItem {
        var purchase = Self.purchase(mode: .subscription, total: 999, tax: 160)
        purchase.productId = "pro.monthly"
        return try mapper.subscriptionStart(
            purchase,
            period: SubscriptionPeriod(start: Self.paidAt, end: Self.paidAt + 30 * Self.day)
        )
    }

    static func change(id: String, total: Int64, tax: Int64, from start: Int64) -> InvoicePayment {
        InvoicePayment(
            invoiceId: id,
            subscriptionId: "sub_123",
            billingReason: "subscription_update",
            externalPurchaseId: "0000-epid",
            bundleId: "com.example",
            productId: "pro.monthly.plus",
            currency: "EUR",
            totalExcludingTax: total - tax,
            tax: tax,
            total: total,
            amountPaid: max(total, 0),
            period: SubscriptionPeriod(start: start, end: paidAt + 30 * day),
            customerCountry: "DE",
            paymentIntentId: nil,
            paidAt: start
        )
    }

    @Test func aPlanChangeCarriesThePaidDaysOn() throws {
        let start = try start()
        let upgrade = try mapper.subscriptionChange(
            Self.change(id: "in_up", total: 550, tax: 88, from: Self.paidAt + 12 * Self.day),
            previous: start
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let body = String(decoding: try encoder.encode(LineItem.subscriptionBuy(upgrade)), as: UTF8.self)
        #expect(
            body
                == #"{"amountTaxExclusive":4620,"amountTaxInclusive":5500,"creationDate":1765536800000,"eventType":"BUY","lineItemId":"in_up","netAmountTaxExclusive":4620,"pricingCurrency":"EUR","productIdentifier":"pro.monthly.plus","productType":"SUBSCRIPTION","quantity":1,"referenceLineItemId":"cs_test_a1","reportingCurrency":"EUR","subscriptionDaysOfPaidService":12,"subscriptionEndDate":1767092000000,"subscriptionEvent":"SUBSCRIPTION_CHANGE","subscriptionStartDate":1765536800000,"taxAmount":880,"taxCountry":"DEU"}"#
        )
        // A downgrade credits more than it charges: the change is still reported, with nothing paid, and the
        // days paid under the upgrade carry on.
        let downgrade = try mapper.subscriptionChange(
            Self.change(id: "in_down", total: -300, tax: -48, from: Self.paidAt + 20 * Self.day),
            previous: upgrade
        )
        #expect(downgrade.amountTaxInclusive == 0)
        #expect(downgrade.taxAmount == 0)
        #expect(downgrade.subscriptionDaysOfPaidService == 20)
        #expect(downgrade.referenceLineItemId == "cs_test_a1")
        // A renewal after it references the start, and the zero-amount change's period adds no paid days.
        var next = Self.change(id: "in_next", total: 999, tax: 160, from: Self.paidAt + 30 * Self.day)
        next.period = SubscriptionPeriod(start: Self.paidAt + 30 * Self.day, end: Self.paidAt + 60 * Self.day)
        let renewal = try mapper.renewal(next, previous: downgrade)
        #expect(renewal.referenceLineItemId == "cs_test_a1")
        #expect(renewal.subscriptionDaysOfPaidService == 20)
        expectValid(
            [.subscriptionBuy(upgrade), .subscriptionBuy(downgrade), .subscriptionBuy(renewal)],
            after: [.subscriptionBuy(start)]
        )
    }

    @Test func aChangeOfAFreeTrialAddsNoPaidDays() throws {
        var trial = try start()
        trial.amountTaxInclusive = 0
        trial.amountTaxExclusive = 0
        trial.taxAmount = 0
        trial.netAmountTaxExclusive = 0
        let change = try mapper.subscriptionChange(
            Self.change(id: "in_up", total: 550, tax: 88, from: Self.paidAt + 5 * Self.day),
            previous: trial
        )
        #expect(change.subscriptionDaysOfPaidService == 0)
    }

    @Test func aLostDisputeIsARefundKeyedOnTheDispute() throws {
        let buy = LineItem.oneTimeBuy(try mapper.oneTimeBuy(Self.purchase()))
        let chargeback = ChargeRefund(
            chargeId: "ch_1",
            paymentId: "pi_123",
            amountRefunded: 2999,
            currency: "eur",
            fullyRefunded: true,
            refundedAt: Self.paidAt + 40 * Self.day,
            disputeId: "dp_1"
        )
        let refund = try #require(try mapper.refund(chargeback, of: buy, alreadyRefunded: 0))
        #expect(refund.lineItemId == "ch_1:dispute:dp_1")
        #expect(refund.amountTaxInclusive == 29990)
        #expect(refund.netAmountTaxExclusive == 0)
        #expect(refund.referenceLineItemId == "cs_test_a1")
        expectValid([.refund(refund)], after: [buy])
    }
}
