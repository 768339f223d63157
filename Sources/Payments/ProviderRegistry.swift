public import Domain

/// Every payment provider linkout can run with, by id. `payments.provider` names one of them; its block
/// `payments.<id>` configures it. A new provider is a folder beside `Stripe/` with its registration, and one
/// line here.
public enum ProviderRegistry {
    public static let all: [ProviderRegistration] = [
        DemoPaymentProvider.registration,
        StripePaymentProvider.registration,
        PaddlePaymentProvider.registration,
    ]

    public static func registration(_ id: ProviderID) -> ProviderRegistration? {
        all.first { $0.id == id }
    }

    /// `demo, stripe or paddle`: the ids, for messages.
    public static var names: String {
        let ids = all.map(\.id.rawValue)
        guard ids.count > 1, let last = ids.last else { return ids.joined() }
        return ids.dropLast().joined(separator: ", ") + " or " + last
    }
}
