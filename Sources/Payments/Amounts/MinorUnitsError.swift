/// Why decimal text is not an amount in a currency's minor units.
public enum MinorUnitsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not three letters.
    case notACurrency(String)
    /// Not plain decimal text (digits with at most one `.`; no sign, exponent or separators).
    case notADecimal(String)
    /// More decimals than the currency has (`"5.125"` EUR, `"1.5"` JPY).
    case tooPrecise(String, currency: String, decimals: Int)
    /// More than `MinorUnits.maximumDigits` digits.
    case tooLarge(String, currency: String)

    public var description: String {
        switch self {
        case .notACurrency(let code): "\"\(code)\" is not an ISO 4217 currency code"
        case .notADecimal(let text): "\"\(text)\" is not decimal text like \"29.99\""
        case .tooPrecise(let text, let currency, let decimals):
            "\"\(text)\" has more than the \(decimals) decimals of \(currency)"
        case .tooLarge(let text, let currency): "\"\(text)\" \(currency) has too many digits"
        }
    }
}
