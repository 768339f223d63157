import Domain

/// Milli-units as text for people: rounded half away from zero to the currency's minor unit (`29990` EUR →
/// `29.99`, `480000` JPY → `480`), in integers.
enum MilliUnitsText {
    static func text(_ milli: Int64, currency: CurrencyCode) -> String {
        let exponent = CurrencyExponent.of(currency.rawValue)
        var divisor: Int64 = 1
        for _ in exponent..<3 { divisor *= 10 }
        let minor = (milli.magnitude + UInt64(divisor / 2)) / UInt64(divisor)
        let digits = String(minor)
        let sign = milli < 0 && minor > 0 ? "−" : ""
        guard exponent > 0 else { return sign + digits }
        let padded = String(repeating: "0", count: max(0, exponent + 1 - digits.count)) + digits
        return sign + padded.dropLast(exponent) + "." + padded.suffix(exponent)
    }
}
