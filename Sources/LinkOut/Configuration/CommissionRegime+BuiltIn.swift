package import Domain

/// The regimes linkout ships, none in force until the operator names it in `commission.regimes`. Every figure is
/// from apple-external-purchase.md §7, which takes them from secondary sources: each says so in `confidence`, and
/// every amount made from them is shown as an estimate. An operator who knows better overrides any field.
extension CommissionRegime {
    /// EU member states' storefronts (ISO 3166-1 alpha-3): where Apple's alternative EU terms apply.
    package static let europeanUnion: Set<String> = [
        "AUT", "BEL", "BGR", "HRV", "CYP", "CZE", "DNK", "EST", "FIN", "FRA", "DEU", "GRC", "HUN", "IRL", "ITA", "LVA",
        "LTU", "LUX", "MLT", "NLD", "POL", "PRT", "ROU", "SVK", "SVN", "ESP", "SWE",
    ]

    /// Named storefront regions a regime's `region` may list, besides alpha-3 codes.
    package static let namedRegions: [String: Set<String>] = [
        "EU": europeanUnion,
        "EEA": europeanUnion.union(["ISL", "LIE", "NOR"]),
        "JP": ["JPN"],
        "BR": ["BRA"],
        "KR": ["KOR"],
        "NL": ["NLD"],
        "US": ["USA"],
    ]

    package static let builtIn: [CommissionRegime] = [
        CommissionRegime(
            id: "eu-2025-06",
            countries: europeanUnion,
            from: UTCDate.milliseconds(year: 2025, month: 6, day: 26),
            until: UTCDate.milliseconds(year: 2026, month: 10, day: 1),
            standardBasisPoints: 1300,
            reducedBasisPoints: 1000,
            everySaleBasisPoints: 500,
            source: "June 2025 EU terms as reported by secondary sources (spec §7): Store Services Fee 13 % (Tier 2; "
                + "10 % in the Small Business Program), Core Technology Commission 5 %; the 2 % initial acquisition "
                + "fee (a new customer's first six months) is not included",
            confidence: "UNCONFIRMED"
        ),
        CommissionRegime(
            id: "eu-2026-10",
            countries: europeanUnion,
            from: UTCDate.milliseconds(year: 2026, month: 10, day: 1),
            standardBasisPoints: 1500,
            reducedBasisPoints: 1000,
            everySaleBasisPoints: 500,
            windowDays: 7,
            source: "DPLA Attachment 14, announced 2026-08-18, effective 2026-10-01, as reported by secondary sources "
                + "(spec §7): 15 % (10 % reduced) only on sales within 7 days of the link tap, 5 % Core Technology "
                + "Commission outside the App Store",
            confidence: "UNCONFIRMED"
        ),
        CommissionRegime(
            id: "jp",
            countries: ["JPN"],
            from: UTCDate.milliseconds(year: 2025, month: 12, day: 18),
            standardBasisPoints: 1500,
            reducedBasisPoints: 1000,
            windowDays: 7,
            source: "secondary sources (spec §7): 15 % (10 % reduced) on sales completed within 7 days of the link "
                + "tap; the start date is the Mobile Software Competition Act's, not Apple's",
            confidence: "UNCONFIRMED"
        ),
        CommissionRegime(
            id: "br",
            countries: ["BRA"],
            from: UTCDate.milliseconds(year: 2026, month: 7, day: 18),
            standardBasisPoints: 1500,
            reducedBasisPoints: 1000,
            windowDays: 7,
            source: "Apple's app-distribution-in-brazil page as quoted by a third-party note of 2026-07-18 (spec §7): "
                + "15 % / 10 %, only sales within 7 days of the link tap; the start date is the note's, Apple's is "
                + "not known here",
            confidence: "secondary"
        ),
    ]
}
