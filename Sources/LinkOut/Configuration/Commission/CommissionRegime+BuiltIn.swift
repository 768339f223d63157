package import Domain

/// The regimes linkout ships, none in force until the operator names it in `commission.regimes`. Every amount
/// made from them is shown as an estimate, with each regime's source and confidence beside it. An operator who
/// knows better overrides any field.
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

    /// Each says where its figures come from and how sure they are: `confirmed` (Apple's own page, read in
    /// full), `secondary` (Apple's pages as quoted word for word by others), `UNCONFIRMED` (a figure or a date no
    /// source we have states). Whether a renewal inherits its subscription start's 7-day result is stated by no
    /// source for any of them: `renewalsInheritWindow` is linkout's reading (the tap led to the subscription),
    /// an operator who learns otherwise sets it to false.
    package static let builtIn: [CommissionRegime] = [
        CommissionRegime(
            id: "eu-2025-06",
            countries: europeanUnion,
            from: UTCDate.milliseconds(year: 2025, month: 6, day: 26),
            until: UTCDate.milliseconds(year: 2026, month: 10, day: 1),
            standardBasisPoints: 1300,
            reducedBasisPoints: 1000,
            reducedRate: .subscriptionAfterOneYear,
            everySaleBasisPoints: 500,
            source: "Apple, \"Communication and promotion of offers on the App Store in the EU\" (June 2025): Store "
                + "Services Tier 2 fee 13 %, 10 % \"for App Store Small Business Program participants or "
                + "subscriptions after their first year\"; the 5 % Core Technology Commission applies only under the "
                + "StoreKit External Purchase Link Entitlement (EU) Addendum (Alternative Terms developers paid the "
                + "Core Technology Fee instead: set everySaleBasisPoints to 0; Tier 1 developers set 500/500). Apple's "
                + "windows count from the app's install or update, which linkout cannot see, so every sale counts; "
                + "the 2 % initial acquisition fee is not included. Read through a word-for-word copy of the page, "
                + "not on Apple's site itself",
            confidence: "secondary"
        ),
        CommissionRegime(
            id: "eu-2026-10",
            countries: europeanUnion,
            from: UTCDate.milliseconds(year: 2026, month: 10, day: 1),
            standardBasisPoints: 1500,
            reducedBasisPoints: 1000,
            reducedRate: .subscriptionAfterOneYear,
            windowDays: 7,
            renewalsInheritWindow: true,
            source: "Apple, \"Changes for apps in the European Union\" and DPLA Attachment 14 (announced 2026-08-18, "
                + "in force 2026-10-01), as quoted word for word by others: store services commission 15 % on "
                + "out-of-app offers, 10 % for program participants and subscriptions after their first year, \"only "
                + "sales made within 7 days of the link tap\"; the 5 % Core Technology Commission is for apps "
                + "distributed outside the App Store, so none is added here. No page of Apple's was read here",
            confidence: "UNCONFIRMED"
        ),
        CommissionRegime(
            id: "jp",
            countries: ["JPN"],
            from: UTCDate.milliseconds(year: 2025, month: 12, day: 18),
            standardBasisPoints: 1500,
            reducedBasisPoints: 1000,
            reducedRate: .subscriptionAfterOneYear,
            windowDays: 7,
            renewalsInheritWindow: true,
            source: "Apple, \"Payment options on the App Store in Japan\" (iOS 26.2, announced 2025-12-17; the "
                + "Mobile Software Competition Act in force 2025-12-18), as quoted word for word by others: 15 %, "
                + "10 % for program participants and subscriptions after their first year, only sales within 7 days "
                + "of the link tap",
            confidence: "secondary"
        ),
        CommissionRegime(
            id: "br",
            countries: ["BRA"],
            from: UTCDate.milliseconds(year: 2026, month: 6, day: 18),
            standardBasisPoints: 1500,
            reducedBasisPoints: 1000,
            reducedRate: .subscriptionAfterOneYear,
            windowDays: 7,
            renewalsInheritWindow: true,
            source: "Apple, \"Payment options on the App Store in Brazil\" (iOS 26.5), as quoted word for word by "
                + "others: 15 %, 10 % for program participants and subscriptions after their first year, only sales "
                + "within 7 days of the link tap. The start is the announcement (2026-06-18; the updated agreement "
                + "was due by 2026-07-06): the day Apple began charging is stated by no source we have",
            confidence: "UNCONFIRMED"
        ),
    ]
}
