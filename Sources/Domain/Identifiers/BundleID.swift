/// An app's bundle identifier, as the token's `bundleId` and the report's `bundleId` name it.
public struct BundleID: Identifier {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
}
