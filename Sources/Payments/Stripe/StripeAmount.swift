/// What Stripe can charge, on top of `MinorUnits` (its exponents are Stripe's): at most 8 digits, a three-decimal
/// amount ending in 0, and ISK in whole krónur (Stripe: "Supported currencies"). A price Stripe cannot charge exactly
/// is an error instead of being rounded silently.
public enum StripeAmount {
    /// Two-decimal for Stripe but charged in whole krónur only: amounts must be divisible by 100 (Stripe support:
    /// "Deprecation of fractional ISK charges and refunds").
    public static let wholeUnitTwoDecimalCurrencies: Set<String> = ["ISK"]

    /// Stripe accepts at most 8 digits in an amount (Stripe: "Supported currencies").
    public static let maximumMinorUnits: Int64 = 99_999_999

    /// Decimal text (`"29.99"`) → Stripe minor units (`2999`). Trailing zeros beyond the exponent are fine
    /// (`"500.00"` JPY is `500`); any other extra precision, and amounts Stripe refuses, throw.
    public static func minorUnits(_ text: String, currency: String) throws(StripeAmountError) -> Int64 {
        let minor: Int64
        do {
            minor = try MinorUnits.parse(text, currency: currency)
        } catch {
            switch error {
            case .notACurrency(let code): throw .notACurrency(code)
            case .notADecimal(let text): throw .notADecimal(text)
            case .tooPrecise(let text, let code, let decimals):
                throw .tooPrecise(text, currency: code, decimals: decimals)
            case .tooLarge(let text, let code): throw .tooLarge(text, currency: code)
            }
        }
        let code = currency.uppercased()
        guard minor <= maximumMinorUnits else { throw .tooLarge(text, currency: code) }
        // Stripe needs the last of three decimals to be 0 (5.124 KWD is refused, 5.120 is `5120`).
        if MinorUnits.exponent(of: code) == 3, minor % 10 != 0 { throw .notChargeable(text, currency: code) }
        if wholeUnitTwoDecimalCurrencies.contains(code), minor % 100 != 0 { throw .notChargeable(text, currency: code) }
        return minor
    }
}

/// Why decimal text is not an amount Stripe can charge.
public enum StripeAmountError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not three letters.
    case notACurrency(String)
    /// Not plain decimal text (digits with at most one `.`; no sign, exponent or separators).
    case notADecimal(String)
    /// More decimals than the currency has (`"5.125"` EUR, `"1.5"` JPY).
    case tooPrecise(String, currency: String, decimals: Int)
    /// More than Stripe's 8 digits.
    case tooLarge(String, currency: String)
    /// An amount Stripe refuses for the currency: a three-decimal amount not ending in 0, ISK with øre.
    case notChargeable(String, currency: String)

    public var description: String {
        switch self {
        case .notACurrency(let code): "\"\(code)\" is not an ISO 4217 currency code"
        case .notADecimal(let text): "\"\(text)\" is not decimal text like \"29.99\""
        case .tooPrecise(let text, let currency, let decimals):
            "\"\(text)\" has more than the \(decimals) decimals Stripe uses for \(currency)"
        case .tooLarge(let text, let currency): "\"\(text)\" \(currency) is more than Stripe's 8 digits"
        case .notChargeable(let text, let currency):
            currency == "ISK"
                ? "\"\(text)\" ISK: Stripe charges whole krónur only"
                : "\"\(text)\" \(currency): Stripe needs the last of the three decimals to be 0"
        }
    }
}
