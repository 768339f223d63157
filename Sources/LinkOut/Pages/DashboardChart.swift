import Domain
import Storage

/// The dashboard's "tokens per day" chart: stacked bars, one per UTC day, one colour per environment and
/// source. Drawn here as SVG with presentation attributes only (no `style`, no script), so it passes the pages'
/// Content-Security-Policy and looks the same in every browser.
struct DashboardChart {
    /// One stacked colour: the tokens of one environment from one source.
    struct Series: Sendable {
        var environment: Environment
        var source: TokenSource
        var label: String
        var lightColor: String
        var darkColor: String
    }

    /// Fixed order, bottom to top. Colours differ in lightness as well as hue, and each keeps at least 3:1
    /// against the chart's background in its theme (WCAG non-text contrast).
    static let series: [Series] = [
        Series(
            environment: .production,
            source: .url,
            label: "production · landing",
            lightColor: "#1f5fa8",
            darkColor: "#7fb2ee"
        ),
        Series(
            environment: .production,
            source: .app,
            label: "production · app",
            lightColor: "#0f7a5c",
            darkColor: "#5fd0a8"
        ),
        Series(
            environment: .sandbox,
            source: .url,
            label: "sandbox · landing",
            lightColor: "#a8530f",
            darkColor: "#f0a868"
        ),
        Series(
            environment: .sandbox,
            source: .app,
            label: "sandbox · app",
            lightColor: "#7b3fa8",
            darkColor: "#c9a0ee"
        ),
    ]

    let firstDay: Int64
    let dayCount: Int
    /// counts[dayIndex][seriesIndex]
    let counts: [[Int64]]

    /// Buckets `rows` into `dayCount` days ending with `lastDay`; rows of other environments or sources are left
    /// out (the ledger writes none today).
    init(rows: [DailyTokenCount], lastDay: Int64, dayCount: Int) {
        self.dayCount = dayCount
        firstDay = lastDay - Int64(dayCount) + 1
        var counts = Array(repeating: Array(repeating: Int64(0), count: Self.series.count), count: dayCount)
        for row in rows {
            let index = Int(row.day - firstDay)
            guard index >= 0, index < dayCount,
                let series = Self.series.firstIndex(where: {
                    $0.environment == row.environment && $0.source == row.source
                })
            else { continue }
            counts[index][series] += row.count
        }
        self.counts = counts
    }

    var total: Int64 { counts.reduce(0) { $0 + $1.reduce(0, +) } }

    func total(series: Int) -> Int64 { counts.reduce(0) { $0 + $1[series] } }

    /// The top of the y axis: four gridline steps of 1, 2 or 5 times a power of ten, so every tick is a whole
    /// number and the busiest day fits.
    var axisMaximum: Int64 {
        let busiest = counts.map { $0.reduce(0, +) }.max() ?? 0
        let needed = max((busiest + 3) / 4, 1)
        var power: Int64 = 1
        while true {
            for factor: Int64 in [1, 2, 5] where power * factor >= needed { return power * factor * 4 }
            power *= 10
        }
    }

    static let width = 720
    static let height = 260
    private static let left = 44
    private static let right = 12
    private static let top = 16
    private static let bottom = 36

    /// The chart as a standalone SVG document, in light or dark colours.
    func svg(dark: Bool) -> String {
        let plotWidth = Self.width - Self.left - Self.right
        let plotHeight = Self.height - Self.top - Self.bottom
        let background = dark ? "#1b1f24" : "#ffffff"
        let ink = dark ? "#e6e9ed" : "#1d2329"
        let grid = dark ? "#3a424b" : "#d5dbe1"
        let maximum = axisMaximum
        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Self.width)" height="\(Self.height)" \
            viewBox="0 0 \(Self.width) \(Self.height)" role="img" font-family="sans-serif" font-size="12">
            <title>Tokens first seen per day, last \(dayCount) days: \(total) in total</title>
            <rect width="\(Self.width)" height="\(Self.height)" fill="\(background)"/>

            """
        for tick in 0...4 {
            let value = maximum * Int64(tick) / 4
            let y = Self.top + plotHeight - plotHeight * tick / 4
            out += "<line x1=\"\(Self.left)\" y1=\"\(y)\" x2=\"\(Self.width - Self.right)\" y2=\"\(y)\" "
            out += "stroke=\"\(grid)\" stroke-width=\"1\"/>\n"
            out += "<text x=\"\(Self.left - 6)\" y=\"\(y + 4)\" text-anchor=\"end\" fill=\"\(ink)\">\(value)</text>\n"
        }
        let slot = Double(plotWidth) / Double(dayCount)
        let barWidth = max(1, slot * 0.7)
        for (index, day) in counts.enumerated() {
            let x = Double(Self.left) + slot * Double(index) + (slot - barWidth) / 2
            var base = Double(Self.top + plotHeight)
            for (seriesIndex, count) in day.enumerated() where count > 0 {
                let height = Double(plotHeight) * Double(count) / Double(maximum)
                base -= height
                let color = dark ? Self.series[seriesIndex].darkColor : Self.series[seriesIndex].lightColor
                out += "<rect x=\"\(Self.format(x))\" y=\"\(Self.format(base))\" width=\"\(Self.format(barWidth))\" "
                out += "height=\"\(Self.format(height))\" fill=\"\(color)\"/>\n"
            }
            // A date under every fifth day and the last one, so the labels never overlap.
            if index % 5 == 0 || index == dayCount - 1 {
                let label = DashboardTime.shortDay(firstDay + Int64(index))
                out += "<text x=\"\(Self.format(x + barWidth / 2))\" y=\"\(Self.height - Self.bottom + 18)\" "
                out += "text-anchor=\"middle\" fill=\"\(ink)\">\(label)</text>\n"
            }
        }
        out += "</svg>\n"
        return out
    }

    private static func format(_ value: Double) -> String {
        String((value * 10).rounded() / 10)
    }
}
