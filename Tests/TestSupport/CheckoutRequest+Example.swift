import Domain
public import Payments

extension CheckoutRequest {
    /// A checkout of the catalog's lifetime product, as the checkout page asks a provider for one.
    public static func example(
        intent: String = "intent-1",
        kind: CheckoutRequest.Product.Kind = .oneTime,
        currency: String = "EUR",
        amount: String = "29.99",
        language: String = "de",
        automaticTax: Bool = false
    ) -> CheckoutRequest {
        CheckoutRequest(
            intentId: intent,
            checkoutId: "chk_abc",
            externalPurchaseId: "0000-epid",
            bundleId: "com.example",
            product: .init(id: "pro.lifetime", displayName: "Pro für immer & mehr", kind: kind),
            price: .init(currency: CurrencyCode(currency), amount: amount),
            language: language,
            successURL: "https://pay.example/return/chk_abc",
            cancelURL: "https://pay.example/checkout/chk_abc",
            automaticTax: automaticTax
        )
    }
}
