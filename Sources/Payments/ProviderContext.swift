/// What every provider may use when it is made, beside its own settings.
public struct ProviderContext: Sendable {
    /// Apple's `taxCountry` (alpha-3) when a payment does not say where the customer is billed.
    public var defaultTaxCountry: String

    public init(defaultTaxCountry: String = "DEU") {
        self.defaultTaxCountry = defaultTaxCountry
    }
}
