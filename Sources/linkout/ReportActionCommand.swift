import Domain
import Foundation
import Lifecycle
import LinkOut
import Storage

/// `linkout report attention|resend|no-line-item|restate|retract`: the tokens that need a person, and the
/// operator's answers to them (the same actions as `POST /admin/tokens/{id}/…`). Safe next to a running server:
/// each action is one transaction, and the server's next reporting pass sends the result.
enum ReportActionCommand {
    static let subcommands: Set<String> = ["attention", "resend", "no-line-item", "restate", "retract"]

    static let arguments: [String: (count: Int, usage: String)] = [
        "attention": (0, "report attention"),
        "resend": (1, "report resend EXTERNAL_PURCHASE_ID"),
        "no-line-item": (1, "report no-line-item EXTERNAL_PURCHASE_ID"),
        "restate": (3, "report restate EXTERNAL_PURCHASE_ID LINE_ITEM_ID FILE (Apple's line item JSON; - for stdin)"),
        "retract": (2, "report retract EXTERNAL_PURCHASE_ID LINE_ITEM_ID"),
    ]

    static func run(_ subcommand: String, _ rest: [String]) throws -> Int32 {
        let expected = arguments[subcommand] ?? (0, subcommand)
        let (flags, positional) = try CommandLineInterface.parseFlags(
            rest,
            allowed: ["--config", "--data-dir"],
            positional: expected.count,
            usage: expected.usage
        )
        // A FILE that cannot be read is a usage error, said before the ledger is opened.
        let body = subcommand == "restate" ? try readBody(positional[2]) : ""
        let configuration = try Configuration.load(
            overrides: .init(configPath: flags["--config"], dataDir: flags["--data-dir"]),
            provider: .noPayments
        )
        // The reader role leaves the visit journal to a server that may be running on the same folder; SQLite
        // serialises the writes.
        let ledger = try CommandLineInterface.openLedgerBesideServer(configuration)
        defer { ledger.close() }
        if subcommand == "attention" {
            let now = Clock.system.nowMilliseconds()
            // Every one, a page at a time: a long list must not end silently at a page's size.
            var entries: [AttentionEntry] = []
            while true {
                let page = try ledger.reports.needingAttention(limit: 1_000, offset: entries.count)
                entries += page
                if page.count < 1_000 { break }
            }
            for entry in entries {
                let left = Int64.saturating(entry.noticeAt, minus: now) / Milliseconds.hour
                // Apple's words and the provider's as one line each (`TerminalText`).
                let lines =
                    ["\(entry.externalPurchaseId)  \(left) h before Apple's notice", "  Apple: \(entry.appleMessage)"]
                    + (entry.waiting.map { ["  waiting: \($0)"] } ?? []) + ["  resolve: \(entry.resolution)"]
                CommandLineInterface.printOutput(lines.map { TerminalText.visible($0) + "\n" }.joined())
            }
            CommandLineInterface.printOutput("\(entries.count) token(s) need attention\n")
            return 0
        }
        let actions = ReportActions(ledger: ledger)
        let before = try CommandAudit.reportState(ledger, ExternalPurchaseID(positional[0]))
        let outcome: ReportActions.Outcome
        do {
            switch subcommand {
            case "resend": outcome = try actions.resend(ExternalPurchaseID(positional[0]))
            case "no-line-item": outcome = try actions.reportNoLineItem(ExternalPurchaseID(positional[0]))
            case "restate":
                outcome = try actions.restate(
                    ExternalPurchaseID(positional[0]),
                    lineItemId: LineItemID(positional[1]),
                    body: body
                )
            default:
                outcome = try actions.retract(ExternalPurchaseID(positional[0]), lineItemId: LineItemID(positional[1]))
            }
        } catch let refusal as ReportActions.Refusal {
            CommandLineInterface.printError("linkout report \(subcommand): \(refusal.description)\n")
            return 1
        }
        let audited = [
            "resend": "report.resend", "no-line-item": "report.no_line_item", "restate": "line_item.restate",
        ]
        try CommandAudit.record(
            ledger,
            action: audited[subcommand] ?? "line_item.retract",
            subject: positional.count > 1 ? positional[0] + " " + positional[1] : positional[0],
            before: before,
            after: outcome.detail
        )
        CommandLineInterface.printOutput("\(outcome.externalPurchaseId): \(outcome.detail)\n")
        return 0
    }

    /// FILE's text (`-`: standard input), up to what the restate route takes (`LineItemsAPI.maxBodyBytes`). One
    /// that cannot be read is a usage error naming it (Foundation's words were a dump of its error domain, and
    /// "permission" for a folder).
    private static func readBody(_ path: String) throws -> String {
        let file = path == "-" ? "/dev/stdin" : path
        switch ConfigurationFile.contents(atPath: file, limit: LineItemsAPI.maxBodyBytes) {
        case .success(let data): return String(decoding: data, as: UTF8.self)
        case .failure(.missing) where path == "-":
            throw CommandLineInterface.UsageError(description: "FILE: cannot read -: standard input is closed")
        case .failure(let failure):
            throw CommandLineInterface.UsageError(
                description: "FILE: " + ConfigurationFile.problem(failure, path: path)
            )
        }
    }
}
