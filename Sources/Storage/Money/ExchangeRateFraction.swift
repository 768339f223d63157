/// Apple's `exchangeRate` (pricing × rate = reporting, spec §5.5) as an integer fraction, to find a pricing
/// amount from a reported one without floating point.
struct ExchangeRateFraction {
    var numerator: Int64
    var denominator: Int64

    /// Nil unless `text` is positive plain decimal text of at most 15 significant digits and 12 decimals.
    init?(_ text: String) {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts[0]
        let decimals = parts.count > 1 ? parts[1] : ""
        let digits = (whole + decimals).drop { $0 == "0" }
        guard !(whole + decimals).isEmpty, (whole + decimals).allSatisfy({ $0.isASCII && $0.isNumber }),
            decimals.count <= 12, digits.count <= 15, let numerator = Int64(digits.isEmpty ? "0" : String(digits)),
            numerator > 0
        else { return nil }
        var denominator: Int64 = 1
        for _ in 0..<decimals.count { denominator *= 10 }
        self.numerator = numerator
        self.denominator = denominator
    }

    /// `reported ÷ rate` = `reported × denominator / numerator`, rounded half up (magnitude), in 128-bit
    /// intermediate arithmetic; clamped to Int64 for absurd figures.
    func pricing(fromReported reported: Int64) -> Int64 {
        let product = reported.magnitude.multipliedFullWidth(by: UInt64(denominator))
        let divisor = UInt64(numerator)
        let (low, carry) = product.low.addingReportingOverflow(divisor / 2)
        let high = product.high + (carry ? 1 : 0)
        guard high < divisor else { return reported < 0 ? Int64.min + 1 : Int64.max }
        let quotient = Int64(clamping: divisor.dividingFullWidth((high: high, low: low)).quotient)
        return reported < 0 ? -quotient : quotient
    }
}
