/// Stripe events that move money linkout does not report to Apple, each with the reason and what a person can do
/// (README, "What linkout reports"). They are logged as warnings, never dropped in silence.
extension StripeEvent {
    /// An `invoice.paid` whose `billing_reason` is neither a subscription's start, renewal nor plan change.
    static func unreportedInvoice(_ reason: String) -> String? {
        switch reason {
        case "manual":
            "a manual invoice is a charge the seller made by hand, of no product linkout sold and on no token; "
                + "if it is for digital goods of the app, report it to Apple yourself"
        case "subscription_threshold":
            "a usage-threshold invoice bills metered usage within the current period: it is neither a renewal "
                + "(no new period) nor a plan change, whether Apple's SUBSCRIPTION_PAYMENT is meant for it is not "
                + "confirmed (Apple's documentation lists the value, not its meaning), and linkout's catalog "
                + "has no metered prices; report it to Apple yourself"
        default: nil
        }
    }

    /// A refund that failed after `charge.refunded` reported it (`refund.failed`, or `refund.updated` /
    /// `charge.refund.updated` with `status` `failed`): the money went back to the seller. Nil for any other
    /// refund update.
    static func failedRefund(_ refund: ProviderJSON) throws(ProviderJSONError) -> String? {
        guard try refund.optionalString("status") == "failed" else { return nil }
        let id = try refund.id("id")
        let charge = try refund.optionalID("charge") ?? "its charge"
        // Its line item is keyed on the charge's refunded total at the time (`AppleLineItems.refund`), which the
        // refund does not carry, and a later refund of the charge back up to that total would reuse the same id:
        // retracting it is left to a person who knows whether the charge will be refunded again.
        return "refund \(id) of \(charge) failed after it was made: the money went back to the seller, and the "
            + "REFUND line item made for it from charge.refunded (\(charge):refund:<refunded total>), once that event "
            + "is here (Stripe delivers in no set order), stays at Apple. If the charge is not refunded again, "
            + "retract it (linkout report retract <token> <line item id>); a later refund of the charge up to the "
            + "same total is taken as the one already reported, and a later dispute or refund is capped by it"
    }
}
