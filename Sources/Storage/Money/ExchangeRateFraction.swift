/// Apple's `exchangeRate` (pricing × rate = reporting; Apple: "exchangeRate") as an integer fraction, to find a
/// pricing amount from a reported one without floating point.
struct ExchangeRateFraction {
    var numerator: UInt128
    var denominator: UInt128

    /// Nil unless `text` is positive plain decimal text of at most 38 digits, what `DecimalNumber` accepts (so
    /// every rate linkout can report converts): both parts then fit in 128 bits (10^38 < 2^128).
    init?(_ text: String) {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts[0]
        let decimals = parts.count > 1 ? parts[1] : ""
        let digits = (whole + decimals).drop { $0 == "0" }
        guard !(whole + decimals).isEmpty, (whole + decimals).utf8.count <= 38,
            (whole + decimals).utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let numerator = UInt128(digits.isEmpty ? "0" : String(digits)), numerator > 0
        else { return nil }
        var denominator: UInt128 = 1
        for _ in 0..<decimals.count { denominator *= 10 }
        self.numerator = numerator
        self.denominator = denominator
    }

    /// `reported ÷ rate` = `reported × denominator / numerator`, rounded half up (magnitude), in 256-bit
    /// intermediate arithmetic; nil when the result does not fit in 64 bits.
    func pricing(fromReported reported: Int64) -> Int64? {
        Self.scaled(reported, by: denominator, over: numerator)
    }

    /// `value × multiplier / divisor`, rounded half away from zero, exact for any 64-bit value and 128-bit
    /// multiplier and divisor (the product is held in 256 bits); nil when `divisor` is 0 or the result does not
    /// fit in 64 bits.
    static func scaled(_ value: Int64, by multiplier: UInt128, over divisor: UInt128) -> Int64? {
        guard divisor > 0 else { return nil }
        let product = UInt128(value.magnitude).multipliedFullWidth(by: multiplier)
        let (low, carry) = product.low.addingReportingOverflow(divisor / 2)
        let (high, overflow) = product.high.addingReportingOverflow(carry ? 1 : 0)
        guard !overflow, high < divisor else { return nil }
        let quotient = divisor.dividingFullWidth((high: high, low: low)).quotient
        guard quotient <= UInt128(Int64.max) else { return nil }
        return value < 0 ? -Int64(quotient) : Int64(quotient)
    }
}
