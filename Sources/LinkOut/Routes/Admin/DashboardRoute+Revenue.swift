import Domain
import HTTPServer
import Lifecycle
import Storage

/// The dashboard's money page (`GET /admin/money`): sales and refunds per day over 30 and 365 days as charts
/// (`GET /admin/money/chart.svg?days=30|365`), and a table per month of the last twelve. Every commission figure
/// is labelled an estimate.
extension DashboardRoute {
    /// The spans the charts cover.
    static let revenueChartDays: Set<Int> = [30, 365]
    static let revenueMonths = 12

    /// `GET /admin/money`
    func money(_ request: HTTPRequest) throws -> HTTPResponse {
        guard configuration.adminToken != nil else { return notFound(request) }
        guard let session = try sessions.signedIn(request) else { return requireSignIn(request) }
        let today = clock.nowMilliseconds() / Milliseconds.day
        let regimes = ledger.money.regimes
        var context: Template.Context = [
            "csrf": .text(sessions.csrfToken(session, scope: .signedIn)),
            "on_money": .flag(true),
            "now": .text(DashboardTime.timestamp(clock.nowMilliseconds())),
            "has_regimes": .flag(!regimes.isEmpty),
            "regimes": .text(regimes.map { "\($0.id) (\($0.confidence))" }.joined(separator: ", ")),
        ]
        let year = try ledger.money.days(fromDay: today - 364, untilDay: today + 1)
        let currency = RevenueChart.busiestCurrency(year) ?? "EUR"
        context["currency"] = .text(currency.rawValue)
        context["charts"] = .list(
            Self.revenueChartDays.sorted().map { days in
                let chart = RevenueChart(days: year, currency: currency, lastDay: today, dayCount: days)
                return [
                    "days": .text(String(days)),
                    "alt": .text(
                        "Bar chart of sales (above the axis) and refunds (below) per day in \(currency), production, "
                            + "last \(days) days: sales \(MilliUnitsText.text(chart.totalSales, currency: currency)), "
                            + "refunds \(MilliUnitsText.text(chart.totalRefunds, currency: currency)). "
                            + "The monthly figures are in the table below."
                    ),
                ]
            }
        )
        let firstMonth = Self.monthsBack(Self.revenueMonths - 1, from: today)
        let months = RevenueReport(
            days: try ledger.money.days(fromDay: firstMonth, untilDay: today + 1),
            firstDay: firstMonth,
            lastDay: today,
            by: .month,
            regimes: regimes
        )
        context["has_months"] = .flag(!months.rows.isEmpty)
        context["month_rows"] = .list(Self.monthRows(months.rows))
        return pages.html(templates.money.render(context))
    }

    /// `GET /admin/money/chart.svg?days=30|365[&theme=dark]`
    func moneyChart(_ request: HTTPRequest) throws -> HTTPResponse {
        guard configuration.adminToken != nil else { return notFound(request) }
        guard try sessions.signedIn(request) != nil else { return HTTPError(.unauthorized, "Sign in first.").response }
        guard let days = Int(request.queryValue("days") ?? "30"), Self.revenueChartDays.contains(days) else {
            return HTTPError(.badRequest, "days is 30 or 365.").response
        }
        let today = clock.nowMilliseconds() / Milliseconds.day
        let rows = try ledger.money.days(fromDay: today - Int64(days) + 1, untilDay: today + 1)
        let currency =
            RevenueChart.busiestCurrency(
                try ledger.money.days(fromDay: today - 364, untilDay: today + 1)
            ) ?? "EUR"
        let chart = RevenueChart(days: rows, currency: currency, lastDay: today, dayCount: days)
        var headers = pages.securityHeaders()
        headers.add(name: "Content-Type", value: "image/svg+xml; charset=utf-8")
        return HTTPResponse(
            status: .ok,
            headers: headers,
            body: Array(chart.svg(dark: request.queryValue("theme") == "dark").utf8)
        )
    }

    /// The first day of the month `count` months before the one holding `day`.
    static func monthsBack(_ count: Int, from day: Int64) -> Int64 {
        var date = UTCDate.civil(days: day)
        for _ in 0..<count {
            date = date.month == 1 ? (date.year - 1, 12, 1) : (date.year, date.month - 1, 1)
        }
        return UTCDate.days(year: date.year, month: date.month, day: 1)
    }

    /// One table row per month, environment and reporting currency, newest month first.
    static func monthRows(_ rows: [RevenueReport.Row]) -> [Template.Context] {
        var sums: [String: RevenueReport.Row] = [:]
        for row in rows {
            let key = "\(row.period) \(row.environment.rawValue) \(row.reportingCurrency)"
            guard var sum = sums[key] else {
                sums[key] = row
                continue
            }
            // Saturating, as the report's own sums (`RevenueReport`).
            sum.salesCount.add(saturating: row.salesCount)
            sum.refundsCount.add(saturating: row.refundsCount)
            sum.grossSales.add(saturating: row.grossSales)
            sum.refunds.add(saturating: row.refunds)
            sum.net.add(saturating: row.net)
            sum.tax.add(saturating: row.tax)
            sum.commissionEstimate.add(saturating: row.commissionEstimate)
            sums[key] = sum
        }
        return sums.keys.sorted(by: >).compactMap { sums[$0] }.map { row in
            let money = { (value: Int64) in MilliUnitsText.text(value, currency: row.reportingCurrency) }
            return [
                "month": .text(row.period),
                "environment": .text(row.environment.rawValue),
                "currency": .text(row.reportingCurrency.rawValue),
                "sales": .text("\(money(row.grossSales)) (\(row.salesCount))"),
                "refunds": .text("\(money(row.refunds)) (\(row.refundsCount))"),
                "net": .text(money(row.net)),
                "tax": .text(money(row.tax)),
                "commission": .text(money(row.commissionEstimate)),
            ]
        }
    }
}
