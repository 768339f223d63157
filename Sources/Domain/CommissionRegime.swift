/// One set of Apple's commission terms for sales made outside the App Store: where it applies (the tax countries of its
/// storefront region), when (by the sale's `creationDate`), the rates in basis points, and how long after the link tap
/// a sale counts. Figures are the operator's or the built-in defaults (their sources and confidence are in the README,
/// "Revenue and Apple's commission"; most are from secondary sources), so every amount computed from them is an
/// estimate.
public struct CommissionRegime: Sendable, Equatable, Codable {
    /// When the reduced rate applies instead of the standard one.
    public enum ReducedRate: String, Sendable, Equatable, Codable, CaseIterable {
        /// Always the standard rate.
        case never
        /// Always the reduced rate (for example a developer in Apple's Small Business Program).
        case always
        /// Subscriptions after a year of paid service (`subscriptionDaysOfPaidService` of at least 365).
        case subscriptionAfterOneYear
    }

    public var id: String
    /// ISO 3166-1 alpha-3 tax countries (Apple's `taxCountry`) the regime covers.
    public var countries: Set<String>
    /// First moment (UNIX ms, inclusive) and end (exclusive; nil: open) of the sales it covers.
    public var from: Int64
    public var until: Int64?
    /// Rates in basis points (1/100 of a percent): 1500 is 15 %.
    public var standardBasisPoints: Int64
    public var reducedBasisPoints: Int64
    public var reducedRate: ReducedRate
    /// Charged on every sale the regime covers, in or out of the window (the EU's Core Technology Commission).
    public var everySaleBasisPoints: Int64
    /// Days from the tap within which a sale carries the standard or reduced rate; nil: every sale does.
    public var windowDays: Int64?
    /// Whether a subscription's renewals and plan changes take the window result of its start (commissionable
    /// when the start was) rather than being measured from the tap themselves.
    public var renewalsInheritWindow: Bool
    /// Where the figures come from, and how sure they are (`confirmed`, `secondary`, `UNCONFIRMED`).
    public var source: String
    public var confidence: String

    public init(
        id: String,
        countries: Set<String>,
        from: Int64,
        until: Int64? = nil,
        standardBasisPoints: Int64,
        reducedBasisPoints: Int64,
        reducedRate: ReducedRate = .never,
        everySaleBasisPoints: Int64 = 0,
        windowDays: Int64? = nil,
        renewalsInheritWindow: Bool = false,
        source: String,
        confidence: String
    ) {
        self.id = id
        self.countries = countries
        self.from = from
        self.until = until
        self.standardBasisPoints = standardBasisPoints
        self.reducedBasisPoints = reducedBasisPoints
        self.reducedRate = reducedRate
        self.everySaleBasisPoints = everySaleBasisPoints
        self.windowDays = windowDays
        self.renewalsInheritWindow = renewalsInheritWindow
        self.source = source
        self.confidence = confidence
    }

    /// Whether a sale in `taxCountry` dated `date` falls under this regime.
    public func covers(taxCountry: TaxCountry, at date: Int64) -> Bool {
        countries.contains(taxCountry.rawValue) && date >= from && (until.map { date < $0 } ?? true)
    }

    /// A stable text of the regimes in force, stored with the money rows: when the operator changes the
    /// regimes, the rows and the daily roll-up are classified again.
    public static func fingerprint(_ regimes: [CommissionRegime]) -> String {
        regimes.map { regime in
            [
                regime.id, regime.countries.sorted().joined(separator: ","), String(regime.from),
                regime.until.map(String.init) ?? "", String(regime.standardBasisPoints),
                String(regime.reducedBasisPoints), regime.reducedRate.rawValue, String(regime.everySaleBasisPoints),
                regime.windowDays.map(String.init) ?? "", regime.renewalsInheritWindow ? "inherit" : "",
            ].joined(separator: "|")
        }.joined(separator: ";")
    }
}
