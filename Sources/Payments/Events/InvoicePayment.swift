public import Domain

/// A paid subscription invoice (`invoice.paid`, Stripe API reference: The Invoice object): a renewal (`billing_reason`
/// `subscription_cycle`), or the first invoice of a subscription (`subscription_create`), whose purchase the session
/// completion already reported and which only lends its period. Amounts in Stripe minor units.
public struct InvoicePayment: Sendable, Equatable {
    /// `in_…`: a renewal's line item is keyed on it.
    public var invoiceId: String
    /// `parent.subscription_details.subscription` (basil and later) or top-level `subscription` (before).
    public var subscriptionId: String?
    /// `billing_reason`.
    public var billingReason: String
    /// The subscription's metadata (`parent.subscription_details.metadata`), which the checkout put there.
    public var externalPurchaseId: ExternalPurchaseID?
    public var bundleId: BundleID?
    public var productId: ProductID?
    /// ISO 4217, upper case.
    public var currency: CurrencyCode
    /// `total_excluding_tax`.
    public var totalExcludingTax: Int64
    /// Σ `total_taxes[].amount` (basil and later), or `tax` (before).
    public var tax: Int64
    /// `total`: after discounts, tax included.
    public var total: Int64
    /// `amount_paid`: what the person was charged. Less than `total` when the customer's credit balance paid part of it
    /// (`starting_balance` → `ending_balance`, Stripe API reference: The Invoice object), e.g. the credit of an earlier
    /// downgrade.
    public var amountPaid: Int64
    /// The period of the new billing cycle's line (`lines.data[].period` of the first line that is not a
    /// proration), or the span of the lines when all are prorations.
    public var period: SubscriptionPeriod
    /// `customer_address.country` (alpha-2), when the invoice has it.
    public var customerCountry: String?
    /// The PaymentIntent that paid it (`payments.data[].payment.payment_intent`, or `payment_intent` before
    /// basil), so a refund of its charge finds this renewal.
    public var paymentIntentId: String?
    /// When it was paid, UNIX ms (`status_transitions.paid_at`, else the event's `created`).
    public var paidAt: Int64
    /// The provider named no period (a Paddle plan change's transaction without `billing_period`): the change
    /// runs from its payment to the end of the period the subscription already had, which the caller knows.
    public var periodRunsToCurrentEnd = false

    public init(
        invoiceId: String,
        subscriptionId: String?,
        billingReason: String,
        externalPurchaseId: ExternalPurchaseID?,
        bundleId: BundleID?,
        productId: ProductID?,
        currency: CurrencyCode,
        totalExcludingTax: Int64,
        tax: Int64,
        total: Int64,
        amountPaid: Int64,
        period: SubscriptionPeriod,
        customerCountry: String?,
        paymentIntentId: String?,
        paidAt: Int64
    ) {
        self.invoiceId = invoiceId
        self.subscriptionId = subscriptionId
        self.billingReason = billingReason
        self.externalPurchaseId = externalPurchaseId
        self.bundleId = bundleId
        self.productId = productId
        self.currency = currency.uppercased()
        self.totalExcludingTax = totalExcludingTax
        self.tax = tax
        self.total = total
        self.amountPaid = amountPaid
        self.period = period
        self.customerCountry = customerCountry
        self.paymentIntentId = paymentIntentId
        self.paidAt = paidAt
    }

    /// What the person was charged for this invoice, tax included: `amountPaid`, never more than the invoice's
    /// `total` (a customer balance owed from before is not this period's sale) and never below zero (a credit is
    /// kept on the balance, not paid out).
    public var charged: Int64 {
        max(min(amountPaid, total), 0)
    }

    /// The tax in `charged` as the provider states it (Paddle's `grand_total_tax`), when it does.
    public var statedChargedTax: Int64?

    /// The tax in `charged`: the provider's own figure, else the invoice's tax in proportion (`TaxShare`).
    public var chargedTax: Int64 {
        if let statedChargedTax, (0...charged).contains(statedChargedTax) { return statedChargedTax }
        return TaxShare.of(tax, in: total, part: charged)
    }

    /// This payment with `periodRunsToCurrentEnd` set.
    public var runningToCurrentEnd: InvoicePayment {
        var payment = self
        payment.periodRunsToCurrentEnd = true
        return payment
    }
}
