import Storage

extension PaymentSessionRecord {
    /// The amount of the payment as a person reads it in `language` (`€29.99`, `29,99 €`).
    func formattedPrice(language: String) -> String {
        Money(currency: currency, decimal: amount)?.formatted(language: language) ?? ""
    }
}
