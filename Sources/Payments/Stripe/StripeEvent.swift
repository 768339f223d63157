import Domain

/// A Stripe webhook event (Stripe: "Receive Stripe events in your webhook endpoint"), decoded from the raw body after
/// `TimestampedHMAC.stripe` accepted it: the envelope (`id` to deduplicate on, `type`, `created`) and what it means for
/// linkout (`payload`). Shapes of API version basil (2025-03-31) and later are read, with the older invoice fields as
/// fallbacks.
public struct StripeEvent: Sendable, Equatable {
    /// `evt_…`. Stripe delivers duplicates and in any order: store events by this id before acting.
    public var id: String
    public var type: String
    /// UNIX seconds.
    public var created: Int64
    public var livemode: Bool
    /// The version `data.object` is rendered in (the endpoint's).
    public var apiVersion: String?
    public var payload: PaymentEvent

    public init(id: String, type: String, created: Int64, livemode: Bool, apiVersion: String?, payload: PaymentEvent) {
        self.id = id
        self.type = type
        self.created = created
        self.livemode = livemode
        self.apiVersion = apiVersion
        self.payload = payload
    }

    /// Decodes an event body. Unknown types decode to `.ignored(type:)`; a known type with missing or mistyped
    /// fields throws, naming the field.
    public static func decode(_ body: [UInt8]) throws(ProviderJSONError) -> StripeEvent {
        let event = try ProviderJSON.parse(body)
        let id = try event.string("id")
        let type = try event.string("type")
        let created = try event.integer("created")
        let at = created * 1000
        let object = { () throws(ProviderJSONError) -> ProviderJSON in try event.child("data").child("object") }
        let payload: PaymentEvent
        switch type {
        case "checkout.session.completed", "checkout.session.async_payment_succeeded":
            let session = try object()
            // Fulfil only when paid or nothing was due; `unpaid` waits for the async events (Stripe: "Fulfill orders").
            switch try session.string("payment_status") {
            case "paid", "no_payment_required":
                var completion = try completion(session, at: at)
                completion.clearedLater = type == "checkout.session.async_payment_succeeded"
                payload = .purchaseCompleted(completion)
            default: payload = .purchasePending(try reference(session))
            }
        case "checkout.session.async_payment_failed":
            payload = .purchaseFailed(try reference(try object()))
        case "checkout.session.expired":
            payload = .sessionExpired(try reference(try object()))
        case "invoice.paid":
            let invoice = try object()
            switch try invoice.string("billing_reason") {
            case "subscription_cycle": payload = .renewalPaid(try invoicePayment(invoice, at: at))
            case "subscription_create": payload = .firstInvoicePaid(try invoicePayment(invoice, at: at))
            case "subscription_update":
                payload = .subscriptionChanged(try invoicePayment(invoice, at: at, proration: true))
            case let reason:
                payload =
                    unreportedInvoice(reason).map { .notReported(type: "\(type) (\(reason))", reason: $0) }
                    ?? .ignored(type: type)
            }
        case "customer.subscription.updated":
            payload =
                try planChangeWithoutInvoice(event, at: at).map { .subscriptionChanged($0) } ?? .ignored(type: type)
        case "refund.failed", "refund.updated", "charge.refund.updated":
            payload =
                try failedRefund(try object()).map { .notReported(type: type, reason: $0) } ?? .ignored(type: type)
        case "invoice_payment.paid":
            let link = try object()
            if let invoice = try link.optionalID("invoice"),
                let paymentIntent = try link.optionalChild("payment")?.optionalID("payment_intent")
            {
                payload = .invoicePaymentLinked(
                    invoiceId: invoice,
                    paymentIntentId: paymentIntent,
                    amountPaid: try link.optionalAmount("amount_paid")
                )
            } else {
                payload = .ignored(type: type)
            }
        case "charge.refunded":
            payload = .refunded(try refund(try object(), at: at))
        case "charge.dispute.closed":
            let dispute = try object()
            guard let charge = try dispute.optionalID("charge") else { throw .missingField("data.object.charge") }
            payload = try disputeClosed(dispute, charge: charge, type: type, at: at)
        case "customer.subscription.deleted":
            let subscription = try object()
            payload = .subscriptionEnded(
                PaymentEvent.SubscriptionEnd(
                    subscriptionId: try subscription.id("id"),
                    endedAt: try subscription.optionalInteger("ended_at").map { $0 * 1000 },
                    externalPurchaseId: try subscription.optionalChild("metadata")?.optionalString(
                        "external_purchase_id"
                    ).map(ExternalPurchaseID.init)
                )
            )
        default:
            payload = .ignored(type: type)
        }
        return StripeEvent(
            id: id,
            type: type,
            created: created,
            livemode: try event.optionalBool("livemode") ?? false,
            apiVersion: try event.optionalString("api_version"),
            payload: payload
        )
    }

    private static func reference(_ session: ProviderJSON) throws(ProviderJSONError) -> PaymentEvent.SessionReference {
        PaymentEvent.SessionReference(
            sessionId: try session.id("id"),
            checkoutId: try session.optionalString("client_reference_id").map(CheckoutID.init)
        )
    }

    private static func completion(_ session: ProviderJSON, at: Int64) throws(ProviderJSONError) -> PurchaseCompletion {
        let metadata = try session.optionalChild("metadata")
        let modeText = try session.string("mode")
        guard let mode = PurchaseCompletion.Mode(rawValue: modeText) else {
            throw .unsupported("checkout session mode \(modeText)")
        }
        let address = try session.optionalChild("customer_details")?.optionalChild("address")
        return PurchaseCompletion(
            sessionId: try session.id("id"),
            checkoutId: try session.optionalString("client_reference_id").map(CheckoutID.init),
            externalPurchaseId: try metadata?.optionalString("external_purchase_id").map(ExternalPurchaseID.init),
            bundleId: try metadata?.optionalString("bundle_id").map(BundleID.init),
            productId: try metadata?.optionalString("product_id").map(ProductID.init),
            mode: mode,
            currency: try CurrencyCode(session.currency("currency")),
            amountSubtotal: try session.amount("amount_subtotal"),
            amountTax: try session.optionalChild("total_details")?.optionalAmount("amount_tax") ?? 0,
            amountTotal: try session.amount("amount_total"),
            customerCountry: try address?.optionalString("country"),
            paymentIntentId: try session.optionalID("payment_intent"),
            subscriptionId: try session.optionalID("subscription"),
            invoiceId: try session.optionalID("invoice"),
            completedAt: at
        )
    }

    /// `proration`: a `subscription_update` invoice, whose lines credit the unused time of the old plan: its
    /// `total`, tax and line amounts may be below zero (a downgrade), so they are read signed.
    private static func invoicePayment(_ invoice: ProviderJSON, at: Int64, proration: Bool = false)
        throws(ProviderJSONError) -> InvoicePayment
    {
        // Since basil the subscription and its metadata sit under `parent.subscription_details`; before, the
        // subscription id was top level (Stripe changelog: "Adds new parent field to invoicing objects").
        let details = try invoice.optionalChild("parent")?.optionalChild("subscription_details")
        var metadata = try details?.optionalChild("metadata")
        if metadata == nil { metadata = try invoice.optionalChild("subscription_details")?.optionalChild("metadata") }
        var subscription = try details?.optionalID("subscription")
        if subscription == nil { subscription = try invoice.optionalID("subscription") }
        // Tax: Σ total_taxes[].amount since basil, else the old `tax` field.
        let taxes = try invoice.children("total_taxes")
        var tax: Int64 = 0
        if taxes.isEmpty {
            tax = try (proration ? invoice.optionalInteger("tax") : invoice.optionalAmount("tax")) ?? 0
        } else {
            for entry in taxes { tax += try proration ? entry.integer("amount") : entry.amount("amount") }
        }
        let lines = try invoice.optionalChild("lines")?.children("data") ?? []
        let period = try billedPeriod(lines, proration: proration)
        var paymentIntent = try invoice.optionalID("payment_intent")
        if paymentIntent == nil, let payments = try invoice.optionalChild("payments") {
            for payment in try payments.children("data") where paymentIntent == nil {
                paymentIntent = try payment.optionalChild("payment")?.optionalID("payment_intent")
            }
        }
        let total = try proration ? invoice.integer("total") : invoice.amount("total")
        let excluding =
            try proration
            ? invoice.optionalInteger("total_excluding_tax") : invoice.optionalAmount("total_excluding_tax")
        return InvoicePayment(
            invoiceId: try invoice.id("id"),
            subscriptionId: subscription,
            billingReason: try invoice.string("billing_reason"),
            externalPurchaseId: try metadata?.optionalString("external_purchase_id").map(ExternalPurchaseID.init),
            bundleId: try metadata?.optionalString("bundle_id").map(BundleID.init),
            productId: try metadata?.optionalString("product_id").map(ProductID.init),
            currency: try CurrencyCode(invoice.currency("currency")),
            totalExcludingTax: excluding ?? total - tax,
            tax: tax,
            total: total,
            amountPaid: try invoice.amount("amount_paid"),
            period: period,
            customerCountry: try invoice.optionalChild("customer_address")?.optionalString("country"),
            paymentIntentId: paymentIntent,
            // When the person paid (Apple's `creationDate`), not when the event was made: an invoice paid by a
            // slow method (SEPA, bank transfer) is paid when the money arrived, which `paid_at` records.
            paidAt: try invoice.optionalChild("status_transitions")?.optionalInteger("paid_at").map { $0 * 1000 } ?? at
        )
    }

    /// The period an invoice pays for. A renewal's is its line of the new billing cycle, the first that is not a
    /// proration (a proration line of an earlier plan change can come first in `lines.data`; Stripe API reference: The
    /// Invoice object). A plan change's (`proration`) starts at the change: the span of its charged lines, the
    /// prorations and, when the billing cycle restarts, the new period, but not its credits for the old plan's
    /// unused time (only when every line is a credit, theirs); so is a renewal's whose lines are all prorations.
    private static func billedPeriod(_ lines: [ProviderJSON], proration: Bool) throws(ProviderJSONError)
        -> SubscriptionPeriod
    {
        guard !lines.isEmpty else { throw .missingField("data.object.lines.data[0]") }
        var span: SubscriptionPeriod?
        var creditSpan: SubscriptionPeriod?
        for line in lines {
            let period = SubscriptionPeriod(
                start: try line.child("period").integer("start") * 1000,
                end: try line.child("period").integer("end") * 1000
            )
            if !proration, try !isProration(line) { return period }
            // A credit (a negative line) is the old plan's unused time, which the change ends: a downgrade from a
            // yearly plan credits up to the old year's end, and that is not service this invoice pays for.
            if try line.optionalInteger("amount") ?? 0 < 0 {
                creditSpan = period.joined(with: creditSpan)
            } else {
                span = period.joined(with: span)
            }
        }
        guard let paid = span ?? creditSpan else { throw .missingField("data.object.lines.data[0]") }
        return paid
    }

    /// `parent.subscription_item_details.proration` or `parent.invoice_item_details.proration` since basil, the
    /// line's own `proration` before.
    private static func isProration(_ line: ProviderJSON) throws(ProviderJSONError) -> Bool {
        if let flag = try line.optionalBool("proration") { return flag }
        let parent = try line.optionalChild("parent")
        for details in ["subscription_item_details", "invoice_item_details"] {
            if let flag = try parent?.optionalChild(details)?.optionalBool("proration") { return flag }
        }
        return false
    }

    /// `charge.refunded`: the charge's `amount_refunded` is cumulative over all its refunds. More refunded than
    /// the charge's `amount` is no event Stripe sends: taken as the whole charge, it told Apple everything was
    /// given back, and the charge's real refunds after it went nowhere.
    private static func refund(_ charge: ProviderJSON, at: Int64) throws(ProviderJSONError) -> Refund {
        let metadata = try charge.optionalChild("metadata")
        let chargeId = try charge.id("id")
        let refunded = try charge.amount("amount_refunded")
        if let amount = try charge.optionalAmount("amount"), refunded > amount {
            throw .moreThan(charge.fieldName("amount_refunded"), "amount")
        }
        return Refund(
            id: nil,
            kind: .refund,
            amount: .refundedSoFar(refunded, fully: try charge.optionalBool("refunded") ?? false),
            paymentId: try charge.optionalID("payment_intent") ?? chargeId,
            chargeId: chargeId,
            currency: try CurrencyCode(charge.currency("currency")),
            refundedAt: at,
            externalPurchaseId: try metadata?.optionalString("external_purchase_id").map(ExternalPurchaseID.init),
            productId: try metadata?.optionalString("product_id").map(ProductID.init)
        )
    }

    /// `charge.dispute.closed`. Only a lost dispute moves money back to the customer for good: a chargeback, of
    /// the disputed `amount` (in the charge's currency and minor units; usually the whole charge). The funds Stripe
    /// withdraws while a dispute is open (`charge.dispute.funds_withdrawn`) come back when it is won
    /// (`…funds_reinstated`), so that hold is not a refund: reporting it would need a retraction after a win (a
    /// restatement with `erroneouslySubmitted`, possible for a year only). A won dispute, or an inquiry closed
    /// (`warning_closed`), moved nothing.
    private static func disputeClosed(_ dispute: ProviderJSON, charge: String, type: String, at: Int64)
        throws(ProviderJSONError) -> PaymentEvent
    {
        let status = try dispute.string("status")
        guard status == "lost" else { return .ignored(type: "\(type) (\(status)): the money stayed with the seller") }
        return .refunded(
            Refund(
                id: try dispute.id("id"),
                kind: .chargeback,
                amount: .this(try dispute.amount("amount"), tax: nil),
                paymentId: try dispute.optionalID("payment_intent") ?? charge,
                chargeId: charge,
                currency: try CurrencyCode(dispute.currency("currency")),
                refundedAt: at
            )
        )
    }
}
