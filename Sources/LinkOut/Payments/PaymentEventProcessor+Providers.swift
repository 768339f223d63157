import Domain
import Payments
import Storage

extension PaymentEventProcessor {
    /// The provider that stored `id`'s events, when it is one this server runs with.
    func provider(_ id: String) -> (any PaymentProvider)? {
        providers.first { $0.id.rawValue == id }
    }

    /// What a stored event changes: its provider decodes it and may complete it from its API (here, in the
    /// background, never in the webhook request), then the mapper, which sees only `PaymentEvent`, decides.
    /// An event its provider cannot read is kept as unreadable; one its provider cannot complete now waits.
    func decision(for event: StoredPaymentEvent, mapper: PaymentChangeMapper, at now: Int64) throws
        -> PaymentChangeMapper.Decision
    {
        let key = (provider: event.provider, eventId: event.eventId)
        guard let provider = provider(event.provider) else {
            return .wait("the server does not run with payment provider \(event.provider)")
        }
        var decoded: ProviderEvent
        do {
            decoded = try provider.decodeEvent(Array(event.body.utf8))
        } catch {
            return .apply(PaymentChange(event: key, outcome: "unreadable: \(error)", at: now))
        }
        do {
            decoded = try provider.resolve(decoded)
        } catch {
            return .wait("\(provider.id.rawValue) could not complete the event: \(error.description)")
        }
        // Money changed hands only when the event says live and the provider runs live: a test key's events
        // never count as sales.
        return try mapper.change(
            for: decoded.payload,
            tookMoney: decoded.isLive && provider.takesRealMoney,
            event: key,
            at: now
        )
    }
}
