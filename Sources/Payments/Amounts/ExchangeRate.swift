/// The rate for reporting a purchase whose pricing currency Apple does not accept as a reporting currency: Apple then
/// wants the amounts in EUR or USD and `exchangeRate` with `pricing × exchangeRate = reporting`, "the Bloomberg
/// exchange rate from within 48 hours of the transaction date" (Apple: "exchangeRate"). linkout has no rate source of
/// its own, so the caller supplies one. The rate is decimal text from the configuration to Apple's `exchangeRate` field
/// (`DecimalNumber`), so the conversion of amounts is exact integer arithmetic and the field carries exactly the
/// operator's digits, never `7.9e-05`.
public struct ExchangeRate: Sendable, Equatable {
    /// `EUR` or `USD`.
    public var reportingCurrency: String
    /// Reporting units per pricing unit, as decimal text: `"3.2510"` (KWD → USD).
    public var rate: String

    public init(reportingCurrency: String, rate: String) {
        self.reportingCurrency = reportingCurrency.uppercased()
        self.rate = rate
    }

    /// The rate as Apple's `exchangeRate` value, when it is plain decimal text.

    /// Whether the rate is positive decimal text this type can convert with.
    public var isValid: Bool { fraction != nil && (reportingCurrency == "EUR" || reportingCurrency == "USD") }

    /// The rate as numerator / 10^scale, or nil when it is not positive decimal text of at most 18 digits.
    public var fraction: (numerator: Int64, denominator: Int64)? {
        let parts = rate.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts[0]
        let decimals = parts.count > 1 ? parts[1] : ""
        let digits = (whole + decimals).drop { $0 == "0" }
        guard !(whole + decimals).isEmpty, (whole + decimals).allSatisfy({ $0.isASCII && $0.isNumber }),
            decimals.count <= 12, digits.count <= 15, let numerator = Int64(digits.isEmpty ? "0" : String(digits)),
            numerator > 0
        else { return nil }
        var denominator: Int64 = 1
        for _ in 0..<decimals.count { denominator *= 10 }
        return (numerator, denominator)
    }
}
