public import Domain

/// The facts of a completed checkout, whoever took the payment: Stripe (`checkout.session.completed` or
/// `…async_payment_succeeded`; Stripe: "Fulfill orders") or the demo provider. Amounts are integers in Stripe's minor
/// units of `currency` (see `MinorUnits`); `AppleLineItems` turns them into Apple's milli-units.
public struct PurchaseCompletion: Sendable, Equatable {
    public enum Mode: String, Sendable, Equatable {
        /// A one-time purchase.
        case payment
        /// The start of a subscription.
        case subscription
    }

    /// `cs_…` (or `demo_<intentId>`): the line item of this purchase is keyed on it.
    public var sessionId: String
    /// linkout's checkout id (`client_reference_id`).
    public var checkoutId: CheckoutID?
    /// From the session's metadata, as the provider put them in.
    public var externalPurchaseId: ExternalPurchaseID?
    public var bundleId: BundleID?
    public var productId: ProductID?
    public var mode: Mode
    /// ISO 4217, upper case (Stripe sends lower case).
    public var currency: CurrencyCode
    /// `amount_subtotal`: before discounts and tax.
    public var amountSubtotal: Int64
    /// `total_details.amount_tax`.
    public var amountTax: Int64
    /// `amount_total`: what the person paid, after discounts, tax included.
    public var amountTotal: Int64
    /// `customer_details.address.country`: ISO 3166-1 alpha-2, when Stripe collected an address.
    public var customerCountry: String?
    /// `payment_intent` (payment mode): refunds (`charge.refunded`) name it.
    public var paymentIntentId: String?
    /// `subscription` (subscription mode): renewals name it.
    public var subscriptionId: String?
    /// `invoice`: the first invoice of a subscription.
    public var invoiceId: String?
    /// When it completed, UNIX ms (the event's `created`); Apple's `creationDate`.
    public var completedAt: Int64
    /// The payment cleared after the person completed the checkout (Stripe's `…async_payment_succeeded`: SEPA and other
    /// delayed methods, days later). The person authorized the purchase at the checkout's completion, which is Apple's
    /// `creationDate` (Apple: "creationDate"), so the caller dates the purchase from its own record of it.
    public var clearedLater: Bool
    /// The first billing period, when known: the demo provider computes it; for Stripe it comes with the first
    /// invoice (`PaymentEvent.firstInvoicePaid`), which the caller may put here.
    public var period: SubscriptionPeriod?

    public init(
        sessionId: String,
        checkoutId: CheckoutID?,
        externalPurchaseId: ExternalPurchaseID?,
        bundleId: BundleID?,
        productId: ProductID?,
        mode: Mode,
        currency: CurrencyCode,
        amountSubtotal: Int64,
        amountTax: Int64,
        amountTotal: Int64,
        customerCountry: String?,
        paymentIntentId: String? = nil,
        subscriptionId: String? = nil,
        invoiceId: String? = nil,
        completedAt: Int64,
        period: SubscriptionPeriod? = nil,
        clearedLater: Bool = false
    ) {
        self.sessionId = sessionId
        self.checkoutId = checkoutId
        self.externalPurchaseId = externalPurchaseId
        self.bundleId = bundleId
        self.productId = productId
        self.mode = mode
        self.currency = currency.uppercased()
        self.amountSubtotal = amountSubtotal
        self.amountTax = amountTax
        self.amountTotal = amountTotal
        self.customerCountry = customerCountry
        self.paymentIntentId = paymentIntentId
        self.subscriptionId = subscriptionId
        self.invoiceId = invoiceId
        self.completedAt = completedAt
        self.period = period
        self.clearedLater = clearedLater
    }
}
