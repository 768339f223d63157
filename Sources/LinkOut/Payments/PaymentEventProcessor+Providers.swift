import Domain
import ExternalPurchase
import Foundation
import Logging
import Payments
import Storage

extension PaymentEventProcessor {
    /// The provider that stored `id`'s events, when it is one this server runs with.
    func provider(_ id: ProviderID) -> (any PaymentProvider)? {
        providers.first { $0.id == id }
    }

    /// What a stored event changes: its provider decodes it and may complete it from its API (here, in the
    /// background, never in the webhook request), then the mapper, which sees only `PaymentEvent`, decides.
    /// An event its provider cannot read is kept as unreadable; one its provider cannot complete now waits.
    /// `announcing`: log what the operator should hear of an event applied (false for a look that only asks
    /// whether it would be, and decides again to apply it). `resolving: false` decides from the event alone, never
    /// asking the provider's API: a look at whether a held sale's rate has come.
    func decision(
        for event: StoredPaymentEvent,
        mapper: PaymentChangeMapper,
        at now: Int64,
        announcing: Bool = true,
        resolving: Bool = true
    ) throws -> PaymentChangeMapper.Decision {
        let key = (provider: event.provider, eventId: event.eventId)
        guard let provider = provider(event.provider) else {
            return .wait("the server does not run with payment provider \(event.provider)")
        }
        var decoded: ProviderEvent
        do {
            decoded = try provider.decodeEvent(Array(event.body.utf8))
        } catch {
            // A signed event of a type linkout acts on that it cannot read may be a sale that never reaches Apple:
            // the operator hears of it (an error in the log), not an info line.
            return .apply(PaymentChange(event: key, outcome: .notReportable("unreadable: \(error)"), at: now))
        }
        do {
            if resolving { decoded = try provider.resolve(decoded) }
        } catch  where error.kind == .rejected {
            // The provider refused for good (a key without the permission, a removed record): waiting would only
            // end in giving the payment up after three days, unreported. It goes on without the details (the
            // configured tax country stands in for the customer's), and the operator hears of it.
            logger.error(
                "payment event completed without the provider's details",
                ["provider": provider.id.rawValue, "event": event.eventId, "error": error.description]
            )
        } catch {
            return .wait("\(provider.id.rawValue) could not complete the event: \(error.description)")
        }
        // A provider that works out no tax charged the catalog's price as it is, tax included: the tax is split
        // out by the billing country's rate (`payments.taxRates`).
        if !provider.chargesTax {
            decoded.payload = taxRates.applied(
                to: decoded.payload,
                fallbackCountry: try subscriptionTaxCountry(of: decoded.payload) ?? mapper.lineItems.fallbackTaxCountry
            )
        }
        // Money changed hands only when the event says live and the provider runs live: a test key's events
        // never count as sales.
        let tookMoney = decoded.isLive && provider.takesRealMoney
        let decision = try mapper.change(for: decoded.payload, tookMoney: tookMoney, event: key, at: now)
        // Once, when the event is applied (one that waits is decided again and again).
        if announcing, case .apply = decision { warnOfUnknownCountry(in: decoded.payload, event: event) }
        return decision
    }

    /// A billing country Apple has no code for (Kosovo's `XK`, a provider's junk) is reported as
    /// `payments.defaultTaxCountry`, as documented; the operator hears of it, since the sale's tax country is then
    /// linkout's stand-in, not the customer's.
    private func warnOfUnknownCountry(in event: PaymentEvent, event stored: StoredPaymentEvent) {
        let country: String?
        switch event {
        case .purchaseCompleted(let completion): country = completion.customerCountry
        case .renewalPaid(let paid), .subscriptionChanged(let paid), .firstInvoicePaid(let paid):
            country = paid.customerCountry
        default: country = nil
        }
        guard let country, CountryCodes.alpha3(forAlpha2: country) == nil else { return }
        logger.warning(
            "billing country unknown to Apple: the sale is reported under payments.defaultTaxCountry",
            [
                "provider": stored.provider.rawValue, "event": stored.eventId,
                "country": String(country.prefix(8)),
            ]
        )
    }

    /// The tax country a subscription's invoice without a billing address is reported under: its subscription's
    /// latest line item's, as `AppleLineItems` takes it, so the tax is split at the rate of the country the line
    /// item names.
    private func subscriptionTaxCountry(of event: PaymentEvent) throws -> String? {
        let invoice: InvoicePayment
        switch event {
        case .renewalPaid(let paid), .subscriptionChanged(let paid), .firstInvoicePaid(let paid): invoice = paid
        default: return nil
        }
        guard invoice.customerCountry == nil, let subscription = invoice.subscriptionId,
            let buy = try ledger.payments.purchase(subscriptionId: subscription)?.buyLineItemId,
            let latest = try ledger.reports.purchaseLineItems(containing: buy).last
        else { return nil }
        return (try? JSONDecoder().decode(LineItem.self, from: Data(latest.body.utf8)))?.common.taxCountry.rawValue
    }
}
