/// An ISO 4217 currency code, upper case as Apple's reports and the ledger hold it; the payment providers' lower
/// case is folded in when a payment is read. Its minor unit comes from the one exponent table.
public struct CurrencyCode: Identifier {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// The code in upper case, as Apple's reports write it.
    public func uppercased() -> Self { Self(rawValue: rawValue.uppercased()) }

    /// ISO 4217's form, three capital ASCII letters: written once for the catalog's prices, the amounts
    /// converted from them and the currencies of Apple's line items.
    public var isWellFormed: Bool {
        rawValue.utf8.count == 3 && rawValue.utf8.allSatisfy { $0 >= 0x41 && $0 <= 0x5A }
    }

    /// The decimals of the minor unit the providers and the ledger count in (`CurrencyExponent.of`).
    public var exponent: Int { CurrencyExponent.of(rawValue) }
}
