public import Domain

/// A provider that takes no money and needs no keys: it sends the person to linkout's own demo page
/// (`{publicURL}/pay/demo/{intentId}`), and when that page says "paid", `completion` produces the same
/// `PurchaseCompletion` a Stripe webhook would, so the whole loop (checkout → payment → line item → report to
/// Apple's sandbox) runs on a laptop.
public struct DemoPaymentProvider: PaymentProvider {
    /// linkout's public base URL (`server.publicURL`), without a trailing slash.
    public let publicURL: String
    /// The billing country of demo purchases, as Apple's alpha-3 `taxCountry` (e.g. `DEU`).
    public let taxCountry: TaxCountry

    public init(publicURL: String, taxCountry: TaxCountry = "DEU") {
        var base = publicURL
        while base.hasSuffix("/") { base.removeLast() }
        self.publicURL = base
        self.taxCountry = taxCountry.uppercased()
    }

    public func startCheckout(_ request: CheckoutRequest) throws(PaymentError) -> CheckoutRedirect {
        guard !request.intentId.isEmpty,
            request.intentId.utf8.allSatisfy({ Self.isUnreservedURLByte($0) })
        else { throw PaymentError(.rejected, "the checkout intent id must be URL-safe") }
        // The price must be exact in its currency's minor units, as any provider needs it.
        do {
            _ = try MinorUnits.parse(request.price.amount, currency: request.price.currency.rawValue)
        } catch {
            throw PaymentError(.rejected, "price of \(request.product.id): \(error.description)")
        }
        return CheckoutRedirect(
            url: "\(publicURL)/pay/demo/\(request.intentId)",
            sessionId: Self.sessionId(intentId: request.intentId)
        )
    }

    /// `demo_<intentId>`: the session id, and so the line item id, of a demo purchase.
    public static func sessionId(intentId: String) -> String { "demo_" + intentId }

    /// The completed purchase for a demo payment of `request` at `at` (UNIX ms). The price is the total paid;
    /// `tax` (decimal text, default none) is the part of it that is tax. Subscriptions get their first period
    /// from the billing interval, since no invoice will tell.
    public func completion(of request: CheckoutRequest, at: Int64, tax: String = "0") throws(PaymentError)
        -> PurchaseCompletion
    {
        let total: Int64
        let taxAmount: Int64
        do {
            total = try MinorUnits.parse(request.price.amount, currency: request.price.currency.rawValue)
            taxAmount = try MinorUnits.parse(tax, currency: request.price.currency.rawValue)
        } catch {
            throw PaymentError(.rejected, "demo amounts: \(error.description)")
        }
        guard taxAmount <= total else { throw PaymentError(.rejected, "the tax exceeds the price") }
        let sessionId = Self.sessionId(intentId: request.intentId)
        var mode = PurchaseCompletion.Mode.payment
        var period: SubscriptionPeriod?
        if case .subscription(let interval) = request.product.kind {
            mode = .subscription
            period = SubscriptionPeriod(start: at, interval: interval)
        }
        return PurchaseCompletion(
            sessionId: sessionId,
            checkoutId: request.checkoutId,
            externalPurchaseId: request.externalPurchaseId,
            bundleId: request.bundleId,
            productId: ProductID(request.product.id),
            mode: mode,
            currency: request.price.currency,
            amountSubtotal: total,
            amountTax: taxAmount,
            amountTotal: total,
            customerCountry: CountryCodes.alpha2(forAlpha3: taxCountry.rawValue),
            paymentIntentId: mode == .payment ? "demo_pi_" + request.intentId : nil,
            subscriptionId: mode == .subscription ? "demo_sub_" + request.intentId : nil,
            completedAt: at,
            period: period
        )
    }

    private static func isUnreservedURLByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
            UInt8(ascii: "~"):
            true
        default: false
        }
    }
}
