import Domain
import Storage

/// The money page's chart: sales and refunds per UTC day in one reporting currency (production), as two bars a
/// day, refunds below the axis. SVG with presentation attributes only (the pages' Content-Security-Policy), and
/// integer geometry: amounts are milli-units and never pass through floating point.
struct RevenueChart {
    let firstDay: Int64
    let dayCount: Int
    let currency: CurrencyCode
    /// Tax-inclusive milli-units of `currency` per day.
    let sales: [Int64]
    let refunds: [Int64]

    /// The reporting currency with the most sales in `days`, for the chart when none is asked for.
    static func busiestCurrency(_ days: [MoneyDay]) -> CurrencyCode? {
        var totals: [CurrencyCode: Int64] = [:]
        for day in days where day.environment == .production {
            totals[day.reportingCurrency, default: 0].add(saturating: day.salesAmount)
        }
        return totals.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }?.key
    }

    init(days: [MoneyDay], currency: CurrencyCode, lastDay: Int64, dayCount: Int) {
        self.dayCount = dayCount
        self.currency = currency
        firstDay = lastDay - Int64(dayCount) + 1
        var sales = Array(repeating: Int64(0), count: dayCount)
        var refunds = sales
        for day in days where day.environment == .production && day.reportingCurrency == currency {
            let index = Int(day.day - firstDay)
            guard index >= 0, index < dayCount else { continue }
            // Saturating, as every money sum: a day's amounts are each bounded, their sum is not.
            sales[index].add(saturating: day.salesAmount)
            refunds[index].add(saturating: day.refundsAmount)
        }
        self.sales = sales
        self.refunds = refunds
    }

    var totalSales: Int64 { sales.reduce(0, Int64.saturating(_:plus:)) }
    var totalRefunds: Int64 { refunds.reduce(0, Int64.saturating(_:plus:)) }

    /// Whole currency units at the top of the axis: 1, 2 or 5 times a power of ten, four steps.
    var axisMaximum: Int64 {
        let busiest = max(sales.max() ?? 0, refunds.max() ?? 0)
        let needed = max((busiest / 1000 + 3) / 4, 1)
        var power: Int64 = 1
        while true {
            for factor: Int64 in [1, 2, 5] where power * factor >= needed { return power * factor * 4 }
            power *= 10
        }
    }

    static let width = 720
    static let height = 300
    static let salesLight = "#1f5fa8"
    static let salesDark = "#7fb2ee"
    static let refundsLight = "#a8530f"
    static let refundsDark = "#f0a868"

    /// `pixels × amount / maximum` (the amount capped at `maximum`, nothing below zero), in 128 bits: a day's
    /// sales may be anywhere up to Int64's end, and their product with the height would not fit in 64.
    static func share(of amount: Int64, in maximum: Int64, pixels: Int) -> Int {
        let part = min(max(amount, 0), maximum)
        guard maximum > 0, part > 0 else { return 0 }
        let product = Int64(pixels).multipliedFullWidth(by: part)
        return Int(maximum.dividingFullWidth(product).quotient)
    }

    /// The chart as a standalone SVG document.
    func svg(dark: Bool) -> String {
        let (left, right, top, bottom) = (64, 12, 12, 28)
        let plotWidth = Self.width - left - right
        // The axis sits two thirds down: sales above it, refunds (usually smaller) below.
        let above = (Self.height - top - bottom) * 2 / 3
        let below = Self.height - top - bottom - above
        let axis = top + above
        let ink = dark ? "#e6e9ed" : "#1d2329"
        let grid = dark ? "#3a424b" : "#d5dbe1"
        let (scaled, overflow) = axisMaximum.multipliedReportingOverflow(by: 1000)
        let maximum = overflow ? Int64.max : scaled
        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Self.width)" height="\(Self.height)" \
            viewBox="0 0 \(Self.width) \(Self.height)" role="img" font-family="sans-serif" font-size="12">
            <title>Sales and refunds per day in \(currency), last \(dayCount) days</title>
            <rect width="\(Self.width)" height="\(Self.height)" fill="\(dark ? "#1b1f24" : "#ffffff")"/>

            """
        for tick in 0...4 {
            let y = axis - above * tick / 4
            out += "<line x1=\"\(left)\" y1=\"\(y)\" x2=\"\(Self.width - right)\" y2=\"\(y)\" stroke=\"\(grid)\"/>\n"
            out += "<text x=\"\(left - 6)\" y=\"\(y + 4)\" text-anchor=\"end\" fill=\"\(ink)\">"
            out += "\(axisMaximum * Int64(tick) / 4)</text>\n"
        }
        out += "<text x=\"\(left - 6)\" y=\"\(axis + below)\" text-anchor=\"end\" fill=\"\(ink)\">−</text>\n"
        for index in 0..<dayCount {
            // Tenths of a pixel, in integers.
            let x = left * 10 + plotWidth * 10 * index / dayCount
            let slot = max(plotWidth * 10 / dayCount, 2)
            let bar = max(slot * 7 / 10, 1)
            let up = Self.share(of: sales[index], in: maximum, pixels: above * 10)
            let down = Self.share(of: refunds[index], in: maximum, pixels: below * 10)
            if up > 0 {
                out += Self.rect(
                    x: x,
                    y: axis * 10 - up,
                    width: bar,
                    height: up,
                    dark ? Self.salesDark : Self.salesLight
                )
            }
            if down > 0 {
                out += Self.rect(
                    x: x,
                    y: axis * 10,
                    width: bar,
                    height: down,
                    dark ? Self.refundsDark : Self.refundsLight
                )
            }
            let step = dayCount > 60 ? 61 : 5
            if index % step == 0 || index == dayCount - 1 {
                out += "<text x=\"\(Self.tenths(x + bar / 2))\" y=\"\(Self.height - 8)\" text-anchor=\"middle\" "
                out += "fill=\"\(ink)\">\(DashboardTime.shortDay(firstDay + Int64(index)))</text>\n"
            }
        }
        out += "</svg>\n"
        return out
    }

    private static func rect(x: Int, y: Int, width: Int, height: Int, _ color: String) -> String {
        "<rect x=\"\(tenths(x))\" y=\"\(tenths(y))\" width=\"\(tenths(width))\" height=\"\(tenths(height))\" "
            + "fill=\"\(color)\"/>\n"
    }

    private static func tenths(_ value: Int) -> String {
        value % 10 == 0 ? String(value / 10) : "\(value / 10).\(abs(value % 10))"
    }
}
