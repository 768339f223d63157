import Domain

/// A plan change Stripe bills with no invoice of its own (Stripe API reference: Update a subscription,
/// `proration_behavior`): `customer.subscription.updated` whose price changed while `latest_invoice` did not, as with
/// `proration_behavior` `none` (nothing billed) or `create_prorations` (pending invoice items, billed with the next
/// renewal, which then reports what was charged). Apple wants subscription events reported "even if they don't include
/// a payment" (Apple: "Reporting tokens with transactions"): a `SUBSCRIPTION_CHANGE` of 0 with the new product. A
/// change billed at once (`always_invoice`) moves `latest_invoice` and is reported from its `invoice.paid` instead, and
/// a renewal moves it too.
extension StripeEvent {
    static func planChangeWithoutInvoice(_ event: ProviderJSON, at: Int64) throws(ProviderJSONError) -> InvoicePayment?
    {
        let data = try event.child("data")
        guard let previous = try data.optionalChild("previous_attributes"), previous.object["latest_invoice"] == nil
        else { return nil }
        let subscription = try data.child("object")
        let before = try prices(previous)
        guard !before.isEmpty, before != (try prices(subscription)) else { return nil }
        // Since basil the period sits on the subscription's items; before, on the subscription.
        var end = try subscription.optionalInteger("current_period_end")
        for item in try subscription.optionalChild("items")?.children("data") ?? [] where end == nil {
            end = try item.optionalInteger("current_period_end")
        }
        guard let end else { throw .missingField("data.object.items.data[0].current_period_end") }
        let metadata = try subscription.optionalChild("metadata")
        return InvoicePayment(
            // The event is the change's only record: its id keys the line item, once however often delivered.
            invoiceId: try event.id("id"),
            subscriptionId: try subscription.id("id"),
            billingReason: "subscription_update",
            externalPurchaseId: try metadata?.optionalString("external_purchase_id").map(ExternalPurchaseID.init),
            bundleId: try metadata?.optionalString("bundle_id").map(BundleID.init),
            productId: try metadata?.optionalString("product_id").map(ProductID.init),
            currency: try CurrencyCode(subscription.currency("currency")),
            totalExcludingTax: 0,
            tax: 0,
            total: 0,
            amountPaid: 0,
            period: SubscriptionPeriod(start: at, end: max(end * 1000, at)),
            customerCountry: nil,
            paymentIntentId: nil,
            paidAt: at
        )
    }

    /// The price ids of a subscription's items (`items.data[].price.id`), or of its legacy `plan`.
    private static func prices(_ subscription: ProviderJSON) throws(ProviderJSONError) -> Set<String> {
        var ids: Set<String> = []
        for item in try subscription.optionalChild("items")?.children("data") ?? [] {
            var price = try item.optionalReference("price")
            if price == nil { price = try item.optionalReference("plan") }
            if let price { ids.insert(price) }
        }
        if let plan = try subscription.optionalReference("plan") { ids.insert(plan) }
        return ids
    }
}
