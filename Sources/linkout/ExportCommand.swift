import Foundation
import LinkOut
import Storage

/// `linkout export`: the token ledger (or, with `--table purchases`, the purchases; with `--table line-items`, every
/// line item as Apple sees it, for reconciliation) as CSV or JSON on standard output (no raw tokens).
enum ExportCommand {
    static func run(_ arguments: [String]) throws -> Int32 {
        let (flags, _) = try CommandLineInterface.parseFlags(
            arguments,
            allowed: ["--format", "--data-dir", "--config", "--table"]
        )
        let format = flags["--format"] ?? "csv"
        guard format == "csv" || format == "json" else {
            throw CommandLineInterface.UsageError(description: "--format must be csv or json")
        }
        let table = flags["--table"] ?? "tokens"
        guard ["tokens", "purchases", "line-items", "audit"].contains(table) else {
            throw CommandLineInterface.UsageError(description: "--table must be tokens, purchases, line-items or audit")
        }
        let configuration = try Configuration.load(
            overrides: .init(configPath: flags["--config"], dataDir: flags["--data-dir"]),
            provider: .noPayments
        )
        let ledger = try CommandLineInterface.openLedgerBesideServer(configuration)
        defer { ledger.close() }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        switch (table, format) {
        case ("audit", "json"):
            let rows = try ledger.audit.entries(limit: Int.max)
            CommandLineInterface.printOutput(String(decoding: try encoder.encode(rows), as: UTF8.self) + "\n")
        case ("audit", _):
            CommandLineInterface.printOutput(AuditCSV.render(try ledger.audit.entries(limit: Int.max)))
        case ("line-items", "json"):
            // Every line item as Apple sees it, in date order (the reconciliation export).
            let rows = try ledger.money.lineItems(from: Int64.min, until: Int64.max, limit: Int.max)
            CommandLineInterface.printOutput(String(decoding: try encoder.encode(rows), as: UTF8.self) + "\n")
        case ("line-items", _):
            try LineItemsCSV.export(ledger) { CommandLineInterface.printOutput($0) }
        case ("purchases", "json"):
            let rows = try ledger.payments.purchases(limit: Int.max)
            CommandLineInterface.printOutput(String(decoding: try encoder.encode(rows), as: UTF8.self) + "\n")
        case ("purchases", _):
            CommandLineInterface.printOutput(PurchasesCSV.render(try ledger.payments.purchases(limit: Int.max)))
        case (_, "json"):
            let rows = try ledger.tokens.tokens()
            CommandLineInterface.printOutput(String(decoding: try encoder.encode(rows), as: UTF8.self) + "\n")
        default:
            // Page by page: a ledger of millions of tokens is written as it is read, never held whole.
            CommandLineInterface.printOutput(LedgerCSV.headerLine)
            _ = try LedgerCSV.export(ledger) { CommandLineInterface.printOutput($0) }
        }
        return 0
    }
}
