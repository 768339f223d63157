import Domain
import HTTPServer
import Lifecycle
import Storage

/// `GET /admin/close?month=YYYY-MM`: the close of a UTC month (see `MonthlyClose`), as JSON, or its outstanding
/// list as CSV with `format=csv`.
extension AdminAPI {
    func close(_ request: HTTPRequest, monitor: CloseMonitor) throws -> HTTPResponse {
        if let refusal = authorize(request) { return refusal }
        guard let text = request.queryValue("month"), let month = CloseMonth(parsing: text) else {
            return JSONResponse.error(
                .badRequest,
                "invalid_month",
                "month is a UTC calendar month written YYYY-MM (for example 2026-11), from 1970-01 to 9998-12."
            )
        }
        var environment = Environment.production
        if let value = request.queryValue("environment") {
            guard let known = Environment(rawValue: value) else {
                return JSONResponse.error(.badRequest, "invalid_environment", "environment is production or sandbox.")
            }
            environment = known
        }
        let format = request.queryValue("format") ?? "json"
        guard format == "json" || format == "csv" else {
            return JSONResponse.error(.badRequest, "invalid_format", "format is json or csv.")
        }
        let limit: Int
        switch Paging.read(request) {
        case .paging(let paging): limit = paging.limit
        case .refused(let response): return response
        }
        // Visits acknowledged a moment ago may still sit in the journal: they count in the close at once (unless
        // a burst is being folded in; then the close answers without them).
        ledger.awaitRecentVisits()
        try monitor.dating.dateAll()
        let report = try monitor.close.report(
            month: month,
            environment: environment,
            now: monitor.clock.nowMilliseconds(),
            status: reporting.status,
            listLimit: limit,
            includeTotals: format == "json"
        )
        guard format == "csv" else { return JSONResponse.json(.ok, report) }
        return HTTPResponse(
            status: .ok,
            headers: [
                "Content-Type": "text/csv; charset=utf-8",
                "Content-Disposition": "attachment; filename=\"linkout-close-\(month).csv\"",
                "Cache-Control": "no-store",
            ],
            body: Array(report.rendered(as: .csv).utf8)
        )
    }
}
