/// How many decimals each currency's minor unit has, as payment providers count them (stripe.md §3: every
/// currency below, and two decimals for ISK and HUF, unlike ISO 4217). Shared by the providers (minor units to
/// Apple's milli-units) and the ledger (a charge's pricing-currency amount in milli-units).
public enum CurrencyExponent {
    /// Counted in whole units: `500` JPY is ¥500.
    public static let zeroDecimalCurrencies: Set<String> = [
        "BIF", "CLP", "DJF", "GNF", "JPY", "KMF", "KRW", "MGA", "PYG", "RWF", "UGX", "VND", "VUV", "XAF", "XOF", "XPF",
    ]

    /// Three decimals: Stripe's example is KWD; the rest of the list is the ISO 4217 three-decimal set.
    public static let threeDecimalCurrencies: Set<String> = ["BHD", "JOD", "KWD", "OMR", "TND"]

    /// The exponent for `currency`: 0 for zero-decimal, 3 for three-decimal, else 2.
    public static func of(_ currency: String) -> Int {
        let code = currency.uppercased()
        if zeroDecimalCurrencies.contains(code) { return 0 }
        if threeDecimalCurrencies.contains(code) { return 3 }
        return 2
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
