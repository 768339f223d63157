import Domain
import HTTPServer
import Lifecycle
import Storage

/// `/admin/revenue`: sales, refunds, net, tax and the commission estimate per day or month, as JSON or CSV.
extension AdminAPI {
    /// `GET /admin/revenue?from=&to=&by=day|month&format=json|csv`
    func revenue(_ request: HTTPRequest) throws -> HTTPResponse {
        if let refusal = authorize(request) { return refusal }
        let query: RevenueQuery
        switch RevenueQuery.read(request, today: reporting.clock.nowMilliseconds() / Milliseconds.day) {
        case .query(let read): query = read
        case .refused(let code, let message): return JSONResponse.error(.badRequest, code, message)
        }
        let report = RevenueReport(
            days: try ledger.money.days(fromDay: query.firstDay, untilDay: query.lastDay + 1),
            firstDay: query.firstDay,
            lastDay: query.lastDay,
            by: query.period,
            regimes: ledger.money.regimes
        )
        guard query.csv else { return JSONResponse.json(.ok, report) }
        return HTTPResponse(
            status: .ok,
            headers: [
                "Content-Type": "text/csv; charset=utf-8",
                "Content-Disposition": "attachment; filename=\"linkout-revenue.csv\"",
                "Cache-Control": "no-store",
            ],
            body: Array(report.csv.utf8)
        )
    }
}

extension AdminAPI {
    /// `GET /admin/line-items.csv?from=&to=`: the reconciliation export of the line items dated in those UTC days
    /// (default the last 30, at most `RevenueQuery.exportMaximumDays`: the body is built in memory), the same
    /// columns as `linkout export --table line-items`.
    func lineItemsCSV(_ request: HTTPRequest) throws -> HTTPResponse {
        if let refusal = authorize(request) { return refusal }
        let query: RevenueQuery
        switch RevenueQuery.read(
            request,
            today: reporting.clock.nowMilliseconds() / Milliseconds.day,
            maximumDays: RevenueQuery.exportMaximumDays
        ) {
        case .query(let read): query = read
        case .refused(let code, let message): return JSONResponse.error(.badRequest, code, message)
        }
        return try exports.run {
            var body: [UInt8] = []
            try LineItemsCSV.export(
                ledger,
                from: Milliseconds.days(query.firstDay),
                until: Milliseconds.days(query.lastDay + 1)
            ) { body += $0.utf8 }
            return HTTPResponse(
                status: .ok,
                headers: [
                    "Content-Type": "text/csv; charset=utf-8",
                    "Content-Disposition": "attachment; filename=\"linkout-line-items.csv\"",
                    "Cache-Control": "no-store",
                ],
                body: body
            )
        }
    }
}
