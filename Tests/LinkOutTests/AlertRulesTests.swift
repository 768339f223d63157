import Foundation
import TestSupport
import Testing

@testable import LinkOut

/// The Prometheus rules (`deploy/prometheus/alerts.yml`) name only metrics the server exposes: a renamed or
/// removed metric fails here instead of leaving an alert that can never fire. `make alerts` checks the rules'
/// syntax and behaviour with promtool.
@Suite("Alert rules")
struct AlertRulesTests {
    static let rules = LiveApplication.repositoryRoot.appendingPathComponent("deploy/prometheus/alerts.yml")

    /// `linkout_…` names in a text (the rules, or a scrape).
    static func metricNames(in text: String) -> Set<String> {
        let pattern = /linkout_[a-z_]+/
        return Set(text.matches(of: pattern).map { String($0.output) })
    }

    /// Names a scrape exposes: each series' name, histograms' `_bucket`/`_sum`/`_count` as their base too.
    static func exposed(_ scrape: String) -> Set<String> {
        var names = Set<String>()
        for line in scrape.split(separator: "\n") where line.hasPrefix("linkout_") {
            let name = String(line.prefix { $0 != "{" && $0 != " " })
            names.insert(name)
            for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
                names.insert(String(name.dropLast(suffix.count)))
            }
        }
        return names
    }

    /// Every name the rules use shows from a fresh server's first scrape: counters the rules read with
    /// `increase()` start at 0, since a series first seen at 1 shows no increase and would never alert.
    static func unknown(_ used: Set<String>, exposed: Set<String>) -> [String] {
        used.subtracting(exposed).sorted()
    }

    @Test func everyMetricTheRulesUseIsOneTheServerExposes() throws {
        let used = Self.metricNames(in: try String(contentsOf: Self.rules, encoding: .utf8))
        #expect(used.count >= 10)
        let app = try LiveApplication()
        // The close's gauges come from its first pass, which starts with the server.
        var scrape = ""
        #expect(
            eventually(within: 30) {
                scrape = (try? app.get("/metrics")).map { String(decoding: $0.body, as: UTF8.self) } ?? ""
                return scrape.contains("linkout_close_outstanding{")
            }
        )
        let exposed = Self.exposed(scrape)
        #expect(Self.unknown(used, exposed: exposed) == [])
        // The comparison itself: a name the server does not expose is reported, gauge or counter.
        #expect(
            Self.unknown(used.union(["linkout_no_such_gauge", "linkout_no_such_total"]), exposed: exposed)
                == ["linkout_no_such_gauge", "linkout_no_such_total"]
        )
    }
}
