import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import LinkOut
import Logging
import Storage

/// `linkout report --dry-run` prints the reports that are due, without sending or recording anything;
/// `linkout report status` prints the outbox by state, the oldest unreported token, and why reports wait;
/// `attention`, `resend`, `no-line-item`, `restate` and `retract` are in `ReportActionCommand`.
enum ReportCommand {
    static func run(_ arguments: [String]) throws -> Int32 {
        if let first = arguments.first, ReportActionCommand.subcommands.contains(first) {
            return try ReportActionCommand.run(first, Array(arguments.dropFirst()))
        }
        let subcommand = arguments.first == "status" ? "status" : "dry-run"
        let rest = arguments.first == "status" ? Array(arguments.dropFirst()) : arguments
        let (flags, _) = try CommandLineInterface.parseFlags(
            rest,
            allowed: ["--config", "--data-dir"],
            switches: subcommand == "status" ? [] : ["--dry-run"]
        )
        if subcommand == "dry-run" && flags["--dry-run"] == nil {
            throw CommandLineInterface.UsageError(
                description: "use 'linkout report --dry-run' or 'linkout report status'"
            )
        }
        let configuration = try Configuration.load(
            overrides: .init(configPath: flags["--config"], dataDir: flags["--data-dir"]),
            provider: .noPayments
        )
        let ledger = try CommandLineInterface.openLedgerBesideServer(configuration)
        defer { ledger.close() }
        let reporting = ReportingService(
            configuration: configuration,
            ledger: ledger,
            logger: Logger(label: "linkout", level: .error)
        )
        let now = Clock.system.nowMilliseconds()
        if subcommand == "status" {
            let summary = try ledger.reports.reportSummary()
            var lines = ["reporting: \(reportingLine(reporting.status, configuration.storage))"]
            if let pause = reporting.pauseLine(now: now) { lines.append(pause) }
            for state in ReportState.allCases {
                lines.append("\(state.rawValue): \(summary.counts[state] ?? 0)")
            }
            lines.append(
                "needing attention: \(try ledger.reports.attentionCount()) token(s) (linkout report attention)"
            )
            lines.append(oldestUnreportedLine(summary.oldestUnreported, notice: summary.firstUnreportedNotice, now))
            CommandLineInterface.printOutput(lines.joined(separator: "\n") + "\n")
            return 0
        }
        let planned = try reporting.plan(now: now)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        for report in planned {
            var line = String(decoding: try encoder.encode(report.report), as: UTF8.self)
            line += "  # \(report.environment)" + (report.revises != nil ? ", revision of a rejected report" : "")
            if !report.problems.isEmpty {
                line += ", NOT SENDABLE: " + report.problems.map(\.description).joined(separator: "; ")
            }
            CommandLineInterface.printOutput(line + "\n")
        }
        // Reports already in the outbox are due as they are: their exact bytes are what the next send carries.
        let due = try ledger.reports.dueReports(now: now, limit: 1000)
        for report in due {
            CommandLineInterface.printOutput(
                report.body + "  # \(report.environment), queued, attempts \(report.attempts)\n"
            )
        }
        CommandLineInterface.printOutput(
            "\(planned.count) report(s) would be queued; \(due.count) already queued and due; reporting: "
                + reporting.status.description + "\n"
        )
        return 0
    }
}
