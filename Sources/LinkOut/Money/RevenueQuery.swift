import Domain
import HTTPServer

/// The parameters of a revenue read (`GET /admin/revenue`, the dashboard's money page): UTC days `from` and `to`
/// (both included; default the last 30 days), `by` day or month, `format` json or csv. Anything else in them is
/// refused with the parameter named.
struct RevenueQuery: Equatable {
    var firstDay: Int64
    var lastDay: Int64
    var period: RevenueReport.Period
    var csv: Bool

    /// The longest span one read covers: ten years of days.
    static let maximumDays: Int64 = 3_660
    /// The longest span of one line-item export over HTTP (`GET /admin/line-items.csv`): the response is built in
    /// memory, so a quarter at most; `linkout export --table line-items` streams any span.
    static let exportMaximumDays: Int64 = 92

    enum Outcome: Equatable {
        case query(RevenueQuery)
        case refused(code: String, message: String)
    }

    static func read(_ request: HTTPRequest, today: Int64, maximumDays: Int64 = maximumDays) -> Outcome {
        var last = today
        if let text = request.queryValue("to") {
            guard let day = UTCDate.parseDay(text) else {
                return .refused(code: "invalid_to", message: "to is a UTC date YYYY-MM-DD.")
            }
            last = day
        }
        var first = last - 29
        if let text = request.queryValue("from") {
            guard let day = UTCDate.parseDay(text) else {
                return .refused(code: "invalid_from", message: "from is a UTC date YYYY-MM-DD.")
            }
            first = day
        }
        guard first <= last, last - first < maximumDays else {
            return .refused(
                code: "invalid_range",
                message: "from must not be after to, and a read covers at most \(maximumDays) days."
            )
        }
        let by = request.queryValue("by") ?? "day"
        guard let period = RevenueReport.Period(rawValue: by) else {
            return .refused(code: "invalid_by", message: "by is day or month.")
        }
        let format = request.queryValue("format") ?? "json"
        guard format == "json" || format == "csv" else {
            return .refused(code: "invalid_format", message: "format is json or csv.")
        }
        return .query(RevenueQuery(firstDay: first, lastDay: last, period: period, csv: format == "csv"))
    }
}
