public import Domain

/// Which apps' reports a claim or a look at due reports takes, by app and environment (`ReportingScope`).
public enum ScopeFilter: Sendable, Equatable {
    case all
    /// Only these scopes' reports (a probe of a blocked app).
    case only([ReportingScope])
    /// Every report but these scopes' (Apple refuses us for them for now).
    case excluding([ReportingScope])

    /// The `AND …` a statement adds to its `WHERE`, on `table`'s `environment` and `bundle_id`, and its values.
    func predicate(table: String) -> (sql: String, parameters: [SQLValue]) {
        let scopes: [ReportingScope]
        let negated: Bool
        switch self {
        case .all: return ("", [])
        case .only(let list): (scopes, negated) = (list, false)
        case .excluding(let list): (scopes, negated) = (list, true)
        }
        guard !scopes.isEmpty else { return negated ? ("", []) : ("AND 1 = 0", []) }
        let each = "(\(table).environment = ? AND \(table).bundle_id = ?)"
        let any = Array(repeating: each, count: scopes.count).joined(separator: " OR ")
        let parameters = scopes.flatMap { [SQLValue.text($0.environment.rawValue), .id($0.bundleId)] }
        return ((negated ? "AND NOT (" : "AND (") + any + ")", parameters)
    }
}
