/// One key of a provider's configuration block `payments.<id>`, as the provider names it.
public struct ProviderSetting: Sendable, Equatable {
    /// The key in `payments.<id>` (`secretKey`).
    public var key: String
    /// The environment variable that overrides it (`LINKOUT_STRIPE_SECRET_KEY`); for a secret also with
    /// `_FILE`, naming a file that holds it.
    public var environment: String?
    /// A secret: never printed, and also read from a file (`<key>File` in the block, or the variable's `_FILE`).
    public var isSecret: Bool
    /// An object of strings by name (a price id per product), read with `ProviderSettings.map`; any other key
    /// refuses an object, so a value the provider would not read is never taken silently.
    public var isMap: Bool

    public init(_ key: String, environment: String? = nil, isSecret: Bool = false, isMap: Bool = false) {
        self.key = key
        self.environment = environment
        self.isSecret = isSecret
        self.isMap = isMap
    }

    /// The block's key for a secret kept in a file.
    public var fileKey: String? { isSecret ? key + "File" : nil }
}
