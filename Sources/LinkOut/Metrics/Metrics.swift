import Foundation
import Synchronization

/// Counters and a latency histogram in Prometheus text format. Label values come from bounded sets (route
/// names, status codes, rejection codes, environments), never from request data, and never hold a token.
package final class Metrics: Sendable {
    private struct RouteStatus: Hashable {
        var route: String
        var status: Int
    }

    private struct State {
        var counters: [String: Int] = [:]
        /// Request counts, kept apart from `counters` so the per-request path builds no strings.
        var requests: [RouteStatus: Int] = [:]
        var latencyBuckets = [Int](repeating: 0, count: Metrics.bucketBounds.count)
        var latencyCount = 0
        var latencySumNanoseconds: UInt64 = 0
    }

    static let bucketBounds: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    private let state = Mutex(State())
    private let gaugeSources = Mutex<[@Sendable () -> [Gauge]]>([])

    /// A value sampled at scrape time.
    struct Gauge: Sendable {
        var name: String
        var help: String
        var value: Int
        /// Series of one name with different labels follow each other; HELP and TYPE come once per name.
        var labels: [(String, String)] = []
    }

    /// Adds gauges read at every scrape (open connections, outbox sizes). Sources may be added after the routes
    /// are built: the HTTP server exists only once its router does.
    func addGauges(_ source: @escaping @Sendable () -> [Gauge]) {
        gaugeSources.withLock { $0.append(source) }
    }

    func increment(_ name: String, _ labels: [(String, String)] = [], by amount: Int = 1) {
        let key = Self.series(name, labels)
        state.withLock { $0.counters[key, default: 0] += amount }
    }

    func observeRequest(route: String, status: Int, nanoseconds: UInt64) {
        let key = RouteStatus(route: route, status: status)
        let seconds = Double(nanoseconds) / 1e9
        state.withLock { state in
            state.requests[key, default: 0] += 1
            state.latencyCount += 1
            state.latencySumNanoseconds += nanoseconds
            for (index, bound) in Self.bucketBounds.enumerated() where seconds <= bound {
                state.latencyBuckets[index] += 1
            }
        }
    }

    /// The exposition text, gauges sampled now.
    func render() -> String {
        let gauges = gaugeSources.withLock { $0 }.flatMap { $0() }
        let snapshot = state.withLock { $0 }
        var counters = snapshot.counters
        for (key, value) in snapshot.requests {
            counters[
                Self.series("linkout_http_requests_total", [("route", key.route), ("status", String(key.status))])
            ] =
                value
        }
        var lines: [String] = []
        var lastName = ""
        for (series, value) in counters.sorted(by: { $0.key < $1.key }) {
            let name = String(series.prefix { $0 != "{" })
            if name != lastName {
                lines.append("# TYPE \(name) counter")
                lastName = name
            }
            lines.append("\(series) \(value)")
        }
        lines.append("# HELP linkout_http_request_duration_seconds Time from a complete request to its response.")
        lines.append("# TYPE linkout_http_request_duration_seconds histogram")
        for (index, bound) in Self.bucketBounds.enumerated() {
            lines.append(
                "linkout_http_request_duration_seconds_bucket{le=\"\(bound)\"} \(snapshot.latencyBuckets[index])"
            )
        }
        lines.append("linkout_http_request_duration_seconds_bucket{le=\"+Inf\"} \(snapshot.latencyCount)")
        lines.append(
            "linkout_http_request_duration_seconds_sum \(String(format: "%.6f", Double(snapshot.latencySumNanoseconds) / 1e9))"
        )
        lines.append("linkout_http_request_duration_seconds_count \(snapshot.latencyCount)")
        var lastGauge = ""
        for gauge in gauges {
            if gauge.name != lastGauge {
                lines.append("# HELP \(gauge.name) \(gauge.help)")
                // A value read at the scrape may still be a count that only grows (connections shed, ledger
                // commits): Prometheus' `_total` names a counter, and `rate()` and promtool want it typed so.
                lines.append("# TYPE \(gauge.name) \(gauge.name.hasSuffix("_total") ? "counter" : "gauge")")
                lastGauge = gauge.name
            }
            lines.append("\(Self.series(gauge.name, gauge.labels)) \(gauge.value)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func series(_ name: String, _ labels: [(String, String)]) -> String {
        guard !labels.isEmpty else { return name }
        return name + "{" + labels.map { "\($0.0)=\"\($0.1)\"" }.joined(separator: ",") + "}"
    }
}
