/// Webhook bodies shaped like Stripe's (API version basil and later unless named otherwise; Stripe API reference:
/// Events and the objects they carry).
enum StripeEventFixtures {
    static func sessionCompleted(
        type: String = "checkout.session.completed",
        paymentStatus: String = "paid",
        mode: String = "payment",
        currency: String = "eur",
        subtotal: Int64 = 2999,
        tax: Int64 = 479,
        total: Int64 = 2999,
        country: String = "DE"
    ) -> String {
        let modeFields =
            mode == "payment"
            ? #""payment_intent":"pi_123","subscription":null,"invoice":null"#
            : #""payment_intent":null,"subscription":"sub_123","invoice":"in_first""#
        return """
            {"id":"evt_session_1","object":"event","api_version":"2026-09-30.endive","created":1764500000,\
            "livemode":false,"type":"\(type)","data":{"object":{"id":"cs_test_a1","object":"checkout.session",\
            "client_reference_id":"chk_abc","mode":"\(mode)","payment_status":"\(paymentStatus)","status":"complete",\
            "currency":"\(currency)","amount_subtotal":\(subtotal),"amount_total":\(total),\
            "total_details":{"amount_discount":0,"amount_shipping":0,"amount_tax":\(tax)},\
            "customer_details":{"email":"a@example.com","address":{"country":"\(country)","city":null}},\
            "metadata":{"external_purchase_id":"0000-epid","bundle_id":"com.example","product_id":"pro.lifetime"},\
            \(modeFields)}}}
            """
    }

    static func invoicePaid(billingReason: String = "subscription_cycle") -> String {
        """
        {"id":"evt_invoice_1","object":"event","api_version":"2026-09-30.endive","created":1767178400,\
        "livemode":false,"type":"invoice.paid","data":{"object":{"id":"in_renew1","object":"invoice",\
        "billing_reason":"\(billingReason)","currency":"eur","amount_paid":999,"total":999,\
        "total_excluding_tax":839,"total_taxes":[{"amount":100,"tax_behavior":"inclusive"},{"amount":60}],\
        "customer_address":{"country":"AT"},\
        "parent":{"type":"subscription_details","subscription_details":{"subscription":"sub_123",\
        "metadata":{"external_purchase_id":"0000-epid","bundle_id":"com.example","product_id":"pro.monthly"}}},\
        "payments":{"data":[{"payment":{"type":"payment_intent","payment_intent":"pi_renew1"}}]},\
        "lines":{"data":[{"id":"il_1","period":{"start":1767178400,"end":1769856800}}]}}}}
        """
    }

    /// Before basil: top-level `subscription`, `tax` and `payment_intent`.
    static let invoicePaidBeforeBasil = """
        {"id":"evt_invoice_old","object":"event","api_version":"2024-06-20","created":1767178400,\
        "type":"invoice.paid","data":{"object":{"id":"in_old","billing_reason":"subscription_cycle",\
        "currency":"usd","amount_paid":1099,"total":1099,"tax":100,"subscription":"sub_old",\
        "payment_intent":"pi_old","subscription_details":{"metadata":{"product_id":"pro.monthly"}},\
        "lines":{"data":[{"period":{"start":1767178400,"end":1769856800}}]}}}}
        """

    static func chargeRefunded(amountRefunded: Int64, refunded: Bool) -> String {
        """
        {"id":"evt_refund_\(amountRefunded)","object":"event","created":1765000000,"type":"charge.refunded",\
        "data":{"object":{"id":"ch_1","object":"charge","amount":2999,"amount_refunded":\(amountRefunded),\
        "currency":"eur","refunded":\(refunded),"payment_intent":"pi_123",\
        "metadata":{"external_purchase_id":"0000-epid","product_id":"pro.lifetime"}}}}
        """
    }

    static let sessionExpired = """
        {"id":"evt_exp","created":1764500000,"type":"checkout.session.expired",\
        "data":{"object":{"id":"cs_test_a1","client_reference_id":"chk_abc","status":"expired"}}}
        """

    static let subscriptionDeleted = """
        {"id":"evt_del","created":1770000000,"type":"customer.subscription.deleted",\
        "data":{"object":{"id":"sub_123","status":"canceled","ended_at":1770000000,\
        "metadata":{"external_purchase_id":"0000-epid"}}}}
        """
}
