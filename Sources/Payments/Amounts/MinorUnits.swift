import Domain

/// Money as payment providers count it: integers in each currency's minor unit, converted from the decimal text of the
/// configuration and on to Apple's milli-units (Apple: "Line item fields"). Only integer arithmetic: a price is never
/// rounded through floating point, and a price with more decimals than its currency has is an error instead of being
/// rounded silently. A provider's own limits (Stripe's 8 digits, its whole krónur) are checked in its folder, on top of
/// this.
///
/// The exponents are the one table's (`CurrencyExponent`: ISO 4217, with Stripe's ISK and MGA).
public enum MinorUnits {
    /// More than 12 significant digits is refused: far beyond any price, and it keeps every later conversion
    /// (to milli-units, sums of amounts) inside Int64, as `ProviderJSON` bounds what providers send.
    public static let maximumDigits = 12

    /// The exponent for `currency`: 0 for zero-decimal, 3 for three-decimal, else 2.
    public static func exponent(of currency: String) -> Int { CurrencyExponent.of(currency) }

    /// Decimal text (`"29.99"`) → minor units (`2999`). Trailing zeros beyond the exponent are fine (`"500.00"`
    /// JPY is `500`); any other extra precision throws.
    public static func parse(_ text: String, currency: String) throws(MinorUnitsError) -> Int64 {
        let code = currency.uppercased()
        guard CurrencyCode(code).isWellFormed else {
            throw .notACurrency(currency)
        }
        let exponent = exponent(of: code)
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts[0]
        let fraction = parts.count > 1 ? parts[1] : ""
        guard !whole.isEmpty || !fraction.isEmpty,
            (whole + fraction).utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            !(parts.count > 1 && fraction.isEmpty)
        else { throw .notADecimal(text) }
        let significantFraction = fraction.prefix(exponent)
        guard fraction.dropFirst(exponent).allSatisfy({ $0 == "0" }) else {
            throw .tooPrecise(text, currency: code, decimals: exponent)
        }
        let digits = (whole + significantFraction + String(repeating: "0", count: exponent - significantFraction.count))
            .drop { $0 == "0" }
        // Checking the length first rules out overflow.
        guard digits.count <= maximumDigits, let minor = digits.isEmpty ? 0 : Int64(digits) else {
            throw .tooLarge(text, currency: code)
        }
        return minor
    }

    /// Minor units → Apple milli-units (`CurrencyExponent.milliUnits`): EUR 299 → 2990, JPY 500 → 500000.
    public static func milliUnits(_ minor: Int64, currency: String) -> Int64 {
        CurrencyExponent.milliUnits(minor, currency: currency)
    }

    /// Minor units as decimal text, for pages and messages: `2999` EUR → `"29.99"`.
    public static func decimalText(_ minor: Int64, currency: String) -> String {
        CurrencyExponent.decimalText(minor, currency: currency)
    }
}
