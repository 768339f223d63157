import Domain
import Foundation
import LedgerSeeding
import Lifecycle
import LinkOut
import Logging
import Storage

// `linkout-bench`: the growth benchmark's helpers (`bench/growth.sh`), kept out of the server's binary.
//   linkout-bench seed --tokens N [--from K] [--total T] [--days D] [--config PATH] [--data-dir DIR]
//       adds landings K..<K+N of T (default K+N) whose reports Apple accepted, the T first seen evenly over the
//       D days (default 365) before three days ago, in large transactions (SQLite, or PostgreSQL with
//       LINKOUT_DATABASE_URL), so a ledger grows in steps as if filled at once. The server is stopped while a
//       SQLite ledger is filled.
//   linkout-bench plan [--runs R] [--config PATH] [--data-dir DIR]
//       times the reporting planner's pass over the ledger (beside a running server) and prints the median.

/// `--name value` pairs after the command.
func flags(_ arguments: ArraySlice<String>) -> [String: String] {
    var result: [String: String] = [:]
    var iterator = arguments.makeIterator()
    while let name = iterator.next() {
        if let value = iterator.next() { result[name] = value }
    }
    return result
}

func configuration(_ flags: [String: String]) throws -> Configuration {
    try Configuration.load(overrides: .init(configPath: flags["--config"], dataDir: flags["--data-dir"]))
}

func seed(_ flags: [String: String]) throws {
    let total = Int(flags["--tokens"] ?? "") ?? 1_000_000
    let first = Int(flags["--from"] ?? "") ?? 0
    let days = Int64(flags["--days"] ?? "") ?? 365
    let all = max(first + total, Int(flags["--total"] ?? "") ?? 0)
    let ledger = try configuration(flags).openLedger(role: .owner)
    defer { ledger.close() }
    let end = Clock.system.nowMilliseconds() - Milliseconds.days(3)
    let span = Milliseconds.days(days)
    // Spaced so the last of all `all` landings is first seen three days ago.
    let spacing = max(1, span / Int64(max(1, all)))
    let start = end - spacing * Int64(all)
    let batch = 50_000
    let began = Date()
    var done = 0
    while done < total {
        let count = min(batch, total - done)
        try ledger.seedReportedLandings(first: first + done, count: count, start: start, spacing: spacing)
        done += count
        if done % 1_000_000 == 0 || done == total {
            let seconds = Date().timeIntervalSince(began)
            print("seeded \(done) landings in \(Int(seconds)) s")
        }
    }
    try ledger.analyzeAfterSeeding()
}

func plan(_ flags: [String: String]) throws {
    let configuration = try configuration(flags)
    let runs = Int(flags["--runs"] ?? "") ?? 5
    let ledger = try configuration.openLedger(role: .reader)
    defer { ledger.close() }
    let reporting = ReportingService(
        configuration: configuration,
        ledger: ledger,
        logger: Logger(label: "linkout-bench", level: .error)
    )
    var times: [Double] = []
    var planned = 0
    for _ in 0..<runs {
        let began = Date()
        planned = try reporting.plan(now: Clock.system.nowMilliseconds()).count
        times.append(Date().timeIntervalSince(began) * 1000)
    }
    times.sort()
    print(String(format: "plan_ms %.1f planned %d", times[times.count / 2], planned))
}

let arguments = CommandLine.arguments.dropFirst()
do {
    switch arguments.first {
    case "seed": try seed(flags(arguments.dropFirst()))
    case "plan": try plan(flags(arguments.dropFirst()))
    default:
        FileHandle.standardError.write(Data("usage: linkout-bench seed|plan [flags]\n".utf8))
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("linkout-bench: \(error)\n".utf8))
    exit(1)
}
