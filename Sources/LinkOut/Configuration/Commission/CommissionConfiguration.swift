package import Domain
import ExternalPurchase

extension Configuration {
    /// `commission` section: the regimes Apple's commission is estimated under. Empty by default: nothing is estimated
    /// until the operator picks the regimes that apply to them (the figures are from secondary sources; README,
    /// "Revenue and Apple's commission").
    package struct Commission: Sendable {
        /// `commission.regimes`: in order, the first that covers a sale (its tax country and date) classifies it.
        /// Each entry is a built-in regime's id (`"eu-2026-10"`), or an object: a built-in's `id` with fields to
        /// override, or a regime of the operator's own with every field.
        package var regimes: [CommissionRegime] = []

        package init() {}

        static let fields: Set<String> = [
            "id", "region", "from", "until", "standardBasisPoints", "reducedBasisPoints", "reducedRate",
            "everySaleBasisPoints", "windowDays", "renewalsInheritWindow", "source", "confidence",
        ]

        static func read(_ section: JSONFields) throws(ConfigurationError) -> Commission {
            try section.rejectUnknownKeys(["regimes"])
            var commission = Commission()
            let field = section.name("regimes")
            switch section.object["regimes"] {
            case nil, .null: return commission
            case .array(let entries):
                for (index, entry) in entries.enumerated() {
                    let regime = try readRegime(entry, field: "\(field)[\(index)]")
                    if commission.regimes.contains(where: { $0.id == regime.id }) {
                        throw ConfigurationError(field: "\(field)[\(index)]", problem: "names \(regime.id) twice")
                    }
                    commission.regimes.append(regime)
                }
                return commission
            default:
                throw ConfigurationError(field: field, problem: "must be a list of regime ids or objects")
            }
        }

        private static func readRegime(_ entry: JSONValue, field: String) throws(ConfigurationError)
            -> CommissionRegime
        {
            switch entry {
            case .string(let id):
                guard let regime = CommissionRegime.builtIn.first(where: { $0.id == id }) else {
                    throw ConfigurationError(field: field, problem: "no built-in regime \(id) (\(builtInIds))")
                }
                return regime
            case .object(let object):
                return try readRegime(JSONFields(object, path: field))
            default:
                throw ConfigurationError(field: field, problem: "must be a regime id or an object")
            }
        }

        static var builtInIds: String { CommissionRegime.builtIn.map(\.id).joined(separator: ", ") }

        private static func readRegime(_ fields: JSONFields) throws(ConfigurationError) -> CommissionRegime {
            try fields.rejectUnknownKeys(Self.fields)
            let id = try fields.requiredString("id")
            guard !id.isEmpty, id.utf8.count <= 64 else {
                throw ConfigurationError(field: fields.name("id"), problem: "must be 1 to 64 characters")
            }
            let base = CommissionRegime.builtIn.first { $0.id == id }
            func required(_ key: String) throws(ConfigurationError) {
                guard base != nil || fields.object[key] != nil else {
                    throw ConfigurationError(
                        field: fields.name(key),
                        problem: "is required for a regime that is not built in (\(builtInIds))"
                    )
                }
            }
            for key in ["region", "from", "standardBasisPoints", "source", "confidence"] { try required(key) }
            var regime =
                base
                ?? CommissionRegime(
                    id: id,
                    countries: [],
                    from: 0,
                    standardBasisPoints: 0,
                    reducedBasisPoints: 0,
                    source: "",
                    confidence: ""
                )
            if fields.object["region"] != nil { regime.countries = try region(fields) }
            if let from = try fields.optionalString("from") { regime.from = try day(from, fields.name("from")) }
            if let until = try fields.optionalString("until") { regime.until = try day(until, fields.name("until")) }
            regime.standardBasisPoints = try fields.integer(
                "standardBasisPoints",
                default: regime.standardBasisPoints,
                range: 0...10_000
            )
            regime.reducedBasisPoints = try fields.integer(
                "reducedBasisPoints",
                default: fields.object["reducedBasisPoints"] == nil && base == nil
                    ? regime.standardBasisPoints : regime.reducedBasisPoints,
                range: 0...10_000
            )
            regime.everySaleBasisPoints = try fields.integer(
                "everySaleBasisPoints",
                default: regime.everySaleBasisPoints,
                range: 0...10_000
            )
            if let text = try fields.optionalString("reducedRate") {
                guard let rule = CommissionRegime.ReducedRate(rawValue: text) else {
                    let names = CommissionRegime.ReducedRate.allCases.map(\.rawValue).joined(separator: ", ")
                    throw ConfigurationError(field: fields.name("reducedRate"), problem: "must be one of \(names)")
                }
                regime.reducedRate = rule
            }
            if fields.object["windowDays"] != nil {
                regime.windowDays = try fields.optionalInteger("windowDays", range: 1...3650)
            }
            regime.renewalsInheritWindow = try fields.bool(
                "renewalsInheritWindow",
                default: regime.renewalsInheritWindow
            )
            regime.source = try fields.string("source", default: regime.source)
            regime.confidence = try fields.string("confidence", default: regime.confidence)
            if let until = regime.until, until <= regime.from {
                throw ConfigurationError(field: fields.name("until"), problem: "must be after from")
            }
            return regime
        }

        /// `region`: named regions (`EU`, `EEA`, `JP`, `BR`, `KR`, `NL`, `US`) and ISO 3166-1 alpha-3 codes.
        private static func region(_ fields: JSONFields) throws(ConfigurationError) -> Set<String> {
            var countries: Set<String> = []
            for (index, name) in try fields.strings("region").enumerated() {
                if let named = CommissionRegime.namedRegions[name] {
                    countries.formUnion(named)
                } else if CountryCodes.isAlpha3(name) {
                    countries.insert(name)
                } else {
                    let names = CommissionRegime.namedRegions.keys.sorted().joined(separator: ", ")
                    throw ConfigurationError(
                        field: "\(fields.name("region"))[\(index)]",
                        problem: "\(name) is neither a region (\(names)) nor an ISO 3166-1 alpha-3 country"
                    )
                }
            }
            guard !countries.isEmpty else {
                throw ConfigurationError(field: fields.name("region"), problem: "must name at least one country")
            }
            return countries
        }

        private static func day(_ text: String, _ field: String) throws(ConfigurationError) -> Int64 {
            guard let days = UTCDate.parseDay(text) else {
                throw ConfigurationError(field: field, problem: "must be a date YYYY-MM-DD (UTC), found \(text)")
            }
            return Milliseconds.days(days)
        }
    }
}
