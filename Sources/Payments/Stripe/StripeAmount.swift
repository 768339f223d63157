/// Money as Stripe counts it: integers in each currency's minor unit (stripe.md §3), converted from the decimal
/// text of the configuration and on to Apple's milli-units (apple-external-purchase.md §5.5). Only integer
/// arithmetic: a price is never rounded through floating point, and a price Stripe cannot charge exactly is an
/// error instead of being rounded silently.
public enum StripeAmount {
    /// Charged in whole units: `500` JPY is ¥500 (stripe.md §3).
    public static let zeroDecimalCurrencies: Set<String> = [
        "BIF", "CLP", "DJF", "GNF", "JPY", "KMF", "KRW", "MGA", "PYG", "RWF", "UGX", "VND", "VUV", "XAF", "XOF", "XPF",
    ]

    /// Three decimals, whose last digit Stripe requires to be 0 (stripe.md §3: 5.124 KWD is refused, 5.120 is
    /// `5120`). Only KWD is in Stripe's own example; the rest of the list is the ISO 4217 three-decimal set.
    public static let threeDecimalCurrencies: Set<String> = ["BHD", "JOD", "KWD", "OMR", "TND"]

    /// Two-decimal for Stripe but charged in whole krónur only: amounts must be divisible by 100 (stripe.md §3).
    public static let wholeUnitTwoDecimalCurrencies: Set<String> = ["ISK"]

    /// Stripe accepts at most 8 digits in an amount (stripe.md §3).
    public static let maximumMinorUnits: Int64 = 99_999_999

    /// Stripe's exponent for `currency`: 0 for zero-decimal, 3 for three-decimal, else 2 (ISK and HUF included,
    /// unlike ISO 4217, which gives ISK 0).
    public static func exponent(of currency: String) -> Int {
        let code = currency.uppercased()
        if zeroDecimalCurrencies.contains(code) { return 0 }
        if threeDecimalCurrencies.contains(code) { return 3 }
        return 2
    }

    /// Decimal text (`"29.99"`) → Stripe minor units (`2999`). Trailing zeros beyond the exponent are fine
    /// (`"500.00"` JPY is `500`); any other extra precision, and amounts Stripe refuses, throw.
    public static func minorUnits(_ text: String, currency: String) throws(StripeAmountError) -> Int64 {
        let code = currency.uppercased()
        guard code.utf8.count == 3, code.utf8.allSatisfy({ $0 >= 0x41 && $0 <= 0x5A }) else {
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
        // More than 8 significant digits is over Stripe's limit; checking the length first also rules out overflow.
        guard digits.count <= 8, let minor = digits.isEmpty ? 0 : Int64(digits), minor <= maximumMinorUnits else {
            throw .tooLarge(text, currency: code)
        }
        if exponent == 3, minor % 10 != 0 { throw .notChargeable(text, currency: code) }
        if wholeUnitTwoDecimalCurrencies.contains(code), minor % 100 != 0 { throw .notChargeable(text, currency: code) }
        return minor
    }

    /// Stripe minor units → Apple milli-units: `milli = amount × 1000 / 10^e` with Stripe's exponent
    /// (stripe.md §3, derived): EUR 299 → 2990, JPY 500 → 500000, ISK 500 → 5000, KWD 5120 → 5120. Exact,
    /// because e ≤ 3.
    public static func milliUnits(_ minor: Int64, currency: String) -> Int64 {
        switch exponent(of: currency) {
        case 0: minor * 1000
        case 3: minor
        default: minor * 10
        }
    }

    /// Minor units as decimal text, for pages and messages: `2999` EUR → `"29.99"`.
    public static func decimalText(_ minor: Int64, currency: String) -> String {
        let exponent = exponent(of: currency)
        guard exponent > 0 else { return String(minor) }
        let sign = minor < 0 ? "-" : ""
        let digits = String(minor.magnitude)
        let padded = String(repeating: "0", count: max(0, exponent + 1 - digits.count)) + digits
        return sign + padded.dropLast(exponent) + "." + padded.suffix(exponent)
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
