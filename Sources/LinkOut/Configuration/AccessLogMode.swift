/// `logging.accessLog` / `LINKOUT_ACCESS_LOG`: which answered requests get an access-log line. Metrics count every
/// request whatever the mode. A pipelining client can make a line per request cheaply (one attack run wrote 700 MB
/// of them), so an operator whose log store cannot take that keeps only the refusals and failures.
package enum AccessLogMode: String, Sendable, CaseIterable {
    /// A line per request (the default).
    case all
    /// Only answers with status 400 or above.
    case errors
    /// No access log; metrics and the other log lines stay.
    case off

    /// Whether a request answered with `status` gets a line.
    func logs(status: Int) -> Bool {
        switch self {
        case .all: true
        case .errors: status >= 400
        case .off: false
        }
    }

    static func parse(_ text: String, field: String) throws(ConfigurationError) -> AccessLogMode {
        guard let mode = AccessLogMode(rawValue: text) else {
            throw ConfigurationError(field: field, problem: "must be one of all, errors, off")
        }
        return mode
    }
}
