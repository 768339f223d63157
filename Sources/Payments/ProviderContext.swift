public import Lifecycle

/// What every provider may use when it is made, beside its own settings.
public struct ProviderContext: Sendable {
    /// Apple's `taxCountry` (alpha-3) when a payment does not say where the customer is billed.
    public var defaultTaxCountry: String
    /// The server's clock: a provider reads the time through it, never the system's directly, so tests move it.
    public var clock: Clock

    public init(defaultTaxCountry: String = "DEU", clock: Clock = .system) {
        self.defaultTaxCountry = defaultTaxCountry
        self.clock = clock
    }
}
