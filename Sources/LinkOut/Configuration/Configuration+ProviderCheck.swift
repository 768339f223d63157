import Domain
import Lifecycle
import Payments

extension Configuration {
    /// Checks that need the environment applied first: the chosen provider can be made (a Stripe shop cannot
    /// start without its keys), and it can sell every catalog product (Stripe: a subscription bills at least once
    /// in three years).
    func validateProvider() throws(ConfigurationError) {
        // Made only to check it, never run: the system clock is as good as any.
        let provider = try payments.makeProvider(clock: .system)
        if let (setting, problem) = provider.refusal(ofCatalog: Set(catalog.map(\.id))) {
            throw ConfigurationError(field: "payments.\(payments.provider.rawValue).\(setting)", problem: problem)
        }
        for (index, product) in catalog.enumerated() {
            if let refusal = provider.refusal(of: product.interval.map { .subscription($0) } ?? .oneTime) {
                throw ConfigurationError(
                    field: "catalog[\(index)]" + (product.interval == nil ? "" : ".intervalCount"),
                    problem: refusal
                )
            }
            for (currency, price) in product.prices.sorted(by: { $0.key < $1.key }) {
                let offered = CheckoutRequest.Price(currency: price.currency, amount: price.decimalText)
                if let refusal = provider.refusal(ofPrice: offered) {
                    throw ConfigurationError(field: "catalog[\(index)].price.\(currency)", problem: refusal)
                }
            }
        }
    }
}
