/// The parts of Paddle's transaction entity (Paddle API reference: Transactions) linkout reads from a notification or
/// from `GET /transactions/{id}`. Amounts are integers in the currency's lowest denomination, read from Paddle's
/// strings without floating point.
public struct PaddleTransaction: Sendable, Equatable {
    /// `txn_…`: the purchase's (or renewal's) line item is keyed on it, and refunds name it.
    public var id: String
    /// `draft`, `ready`, `billed`, `paid`, `completed`, `canceled`, `past_due`.
    public var status: String
    /// `web`, `api`, `subscription_recurring` (a renewal), `subscription_update` (a plan change), … Absent → nil.
    public var origin: String?
    public var subscriptionId: String?
    public var customerId: String?
    public var addressId: String?
    /// ISO 4217, upper case.
    public var currency: String
    public var customData: PaddleCustomData
    /// `billing_period`: the period paid for, set for subscription transactions; UNIX ms.
    public var billingPeriod: SubscriptionPeriod?
    /// `details.totals.subtotal`: before discount and tax.
    public var subtotal: Int64
    /// `details.totals.grand_total`: what the customer paid, tax included, after credits. May be below zero for
    /// a plan change that credits unused time.
    public var grandTotal: Int64
    /// `details.totals.grand_total_tax`: the tax in `grandTotal`.
    public var grandTotalTax: Int64
    /// `details.totals.total` and `.tax`: the price of the period, tax included, before credits (a renewal paid
    /// from the credit of a downgrade costs this though it charges less); `grandTotal` when absent.
    public var total: Int64 = 0
    public var tax: Int64 = 0
    /// `address.country_code` (ISO 3166-1 alpha-2), only when read with `?include=address`: notifications carry only
    /// `address_id` (Paddle API reference: Get a transaction).
    public var countryCode: String?

    public init(
        id: String,
        status: String,
        origin: String?,
        subscriptionId: String?,
        customerId: String?,
        addressId: String?,
        currency: String,
        customData: PaddleCustomData,
        billingPeriod: SubscriptionPeriod?,
        subtotal: Int64,
        grandTotal: Int64,
        grandTotalTax: Int64,
        countryCode: String? = nil
    ) {
        self.id = id
        self.status = status
        self.origin = origin
        self.subscriptionId = subscriptionId
        self.customerId = customerId
        self.addressId = addressId
        self.currency = currency.uppercased()
        self.customData = customData
        self.billingPeriod = billingPeriod
        self.subtotal = subtotal
        self.grandTotal = grandTotal
        self.grandTotalTax = grandTotalTax
        self.countryCode = countryCode
    }

    /// Reads a transaction object. Only a plan change's amounts may be negative; anything else below zero is a
    /// broken or forged payload and must not become a sale.
    init(_ object: ProviderJSON) throws(ProviderJSONError) {
        let origin = try object.optionalString("origin")
        let totals = try object.child("details").child("totals")
        let signed = origin == "subscription_update"
        let read = { (key: String) throws(ProviderJSONError) -> Int64 in
            try signed ? totals.paddleSignedAmount(key) : totals.paddleAmount(key)
        }
        var currency = try totals.optionalCurrency("currency_code")
        if currency == nil { currency = try object.currency("currency_code") }
        var period: SubscriptionPeriod?
        if let span = try object.optionalChild("billing_period") {
            period = SubscriptionPeriod(start: try span.paddleTime("starts_at"), end: try span.paddleTime("ends_at"))
        }
        self.init(
            id: try object.id("id"),
            status: try object.string("status"),
            origin: origin,
            subscriptionId: try object.optionalID("subscription_id"),
            customerId: try object.optionalID("customer_id"),
            addressId: try object.optionalID("address_id"),
            currency: currency ?? "",
            customData: try PaddleCustomData(object.optionalChild("custom_data")),
            billingPeriod: period,
            subtotal: try read("subtotal"),
            grandTotal: try read("grand_total"),
            grandTotalTax: try read("grand_total_tax"),
            countryCode: try object.optionalChild("address")?.optionalString("country_code")
        )
        total = totals.object["total"] == nil ? grandTotal : try read("total")
        tax = totals.object["tax"] == nil ? grandTotalTax : try read("tax")
    }
}
