public import Domain

/// A kind of provider, declared beside its code: its id, the keys of its configuration block, how long its
/// payment sessions live, and how it is made from its settings. `ProviderRegistry.all` lists one of these per
/// provider.
public struct ProviderRegistration: Sendable {
    public let id: ProviderID
    /// The keys of `payments.<id>`; any other key there is refused at start.
    public let settings: [ProviderSetting]
    /// Makes the provider, or names the setting that stops it (the server then exits 2).
    public let make: Make
    /// How long a payment session the provider opened may still complete (ms). A token that expires sooner has
    /// the session closed at its expiry (Apple takes no line item dated after it), and a token's `NO_LINE_ITEM`
    /// report waits this long after a payment was started, since its purchase may still come.
    public let sessionLifetime: Int64
    /// The shortest payment session the provider opens (ms): with less than this (and a minute for the call)
    /// left on the token, the person is asked to open the link from the app again.
    public let shortestSession: Int64

    /// Makes the provider from its settings, or names the setting that stops it.
    public typealias Make =
        @Sendable (ProviderSettings, ProviderContext) throws(ProviderConfigurationError) ->
        any PaymentProvider

    /// A provider that does not say how long its sessions live is taken to close them within a day, and to open
    /// one for any time left on the token.
    public init(
        id: ProviderID,
        settings: [ProviderSetting],
        sessionLifetime: Int64 = Milliseconds.day,
        shortestSession: Int64 = 0,
        make: @escaping Make
    ) {
        self.id = id
        self.settings = settings
        self.sessionLifetime = sessionLifetime
        self.shortestSession = shortestSession
        self.make = make
    }

    /// Settings for this provider with nothing set yet.
    public func emptySettings() -> ProviderSettings { ProviderSettings(provider: id, declared: settings) }
}
