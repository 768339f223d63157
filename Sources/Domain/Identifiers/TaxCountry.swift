/// The ISO 3166-1 alpha-3 country whose tax applies to a payment: the `taxCountry` of Apple's line item.
public struct TaxCountry: Identifier {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// The country in upper case, as Apple's reports write it.
    public func uppercased() -> Self { Self(rawValue: rawValue.uppercased()) }
}
