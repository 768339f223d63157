import Domain

/// What a commission estimate rests on, shown beside every estimate: each regime in force with its source and
/// how sure that source is (`confirmed`, `secondary`, `UNCONFIRMED`).
struct CommissionBasis: Encodable, Sendable, Equatable {
    var id: String
    var confidence: String
    var source: String

    static func of(_ regimes: [CommissionRegime]) -> [CommissionBasis] {
        regimes.map { CommissionBasis(id: $0.id, confidence: $0.confidence, source: $0.source) }
    }

    /// One line for text: `eu-2026-10 (secondary: Apple, "Changes for apps…")`.
    static func text(_ regimes: [CommissionRegime]) -> String {
        regimes.map { "\($0.id) (\($0.confidence): \($0.source))" }.joined(separator: "; ")
    }
}
