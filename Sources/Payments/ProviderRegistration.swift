public import Domain

/// A kind of provider, declared beside its code: its id, the keys of its configuration block, and how it is
/// made from them. `ProviderRegistry.all` lists one of these per provider.
public struct ProviderRegistration: Sendable {
    public let id: ProviderID
    /// The keys of `payments.<id>`; any other key there is refused at start.
    public let settings: [ProviderSetting]
    /// Makes the provider, or names the setting that stops it (the server then exits 2).
    public let make: Make

    /// Makes the provider from its settings, or names the setting that stops it.
    public typealias Make =
        @Sendable (ProviderSettings, ProviderContext) throws(ProviderConfigurationError) ->
        any PaymentProvider

    public init(id: ProviderID, settings: [ProviderSetting], make: @escaping Make) {
        self.id = id
        self.settings = settings
        self.make = make
    }

    /// Settings for this provider with nothing set yet.
    public func emptySettings() -> ProviderSettings { ProviderSettings(provider: id, declared: settings) }
}
