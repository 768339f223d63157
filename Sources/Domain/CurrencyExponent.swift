/// The one table of currency exponents: how many decimals each currency's minor unit has. Every amount in minor
/// units, whoever made it (a provider's webhook, the catalog, the ledger), and every amount on every page is
/// read through it.
///
/// The exponents are ISO 4217's ("Minor unit" of its list one), with the two places where the payment providers'
/// minor units differ: Stripe counts ISK in hundredths (charging whole krónur only) and MGA in whole units
/// (Stripe's currency documentation). Paddle counts in "the lowest denomination" of each currency's
/// `decimal_places`: JPY's 0 is confirmed, ISO 4217's exponent is assumed for the rest (unconfirmed; ISK and MGA
/// are not among its currencies), so one table serves both. A person reads ISK in whole krónur: `displayDigits` gives ISO's 0 when there is no
/// fraction.
public enum CurrencyExponent {
    /// ISO 4217's currencies whose minor unit is not a hundredth (funds codes with four decimals left out:
    /// nothing is priced in them).
    public static let iso4217: [String: Int] = [
        "BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0, "PYG": 0, "RWF": 0,
        "UGX": 0, "UYI": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
        "BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
    ]

    /// Where the providers' minor units differ from ISO 4217 (Stripe's currency documentation).
    public static let providerExceptions: [String: Int] = ["ISK": 2, "MGA": 0]

    /// The exponent of `currency`'s minor units as providers and the ledger count them.
    public static func of(_ currency: String) -> Int {
        let code = currency.uppercased()
        return providerExceptions[code] ?? iso4217[code] ?? 2
    }

    /// The decimals a person reads for `minor` units of `currency`: ISO 4217's when the amount has no finer part
    /// (ISK 50000 is `500`), else the minor unit's.
    public static func displayDigits(_ minor: Int64, currency: String) -> Int {
        let counted = of(currency)
        let iso = iso4217[currency.uppercased()] ?? 2
        guard iso < counted else { return counted }
        var scale: Int64 = 1
        for _ in iso..<counted { scale *= 10 }
        return minor % scale == 0 ? iso : counted
    }

    /// Minor units as decimal text with `digits` decimals (`of` unless given): `2999` EUR → `29.99`, `50000` ISK
    /// with 0 digits → `500`. In integers.
    public static func decimalText(_ minor: Int64, currency: String, digits: Int? = nil) -> String {
        let exponent = of(currency)
        let shown = min(digits ?? exponent, exponent)
        var drop: Int64 = 1
        for _ in shown..<exponent { drop *= 10 }
        let magnitude = minor.magnitude / UInt64(drop)
        let sign = minor < 0 ? "-" : ""
        let text = String(magnitude)
        guard shown > 0 else { return sign + text }
        let padded = String(repeating: "0", count: max(0, shown + 1 - text.count)) + text
        return sign + padded.dropLast(shown) + "." + padded.suffix(shown)
    }

    /// Minor units → Apple milli-units: `milli = amount × 1000 / 10^e` (derived): EUR 299 → 2990, JPY 500 →
    /// 500000, ISK 500 → 5000, KWD 5120 → 5120. Exact, because e ≤ 3.
    public static func milliUnits(_ minor: Int64, currency: String) -> Int64 {
        switch of(currency) {
        case 0: minor * 1000
        case 3: minor
        default: minor * 10
        }
    }
}
