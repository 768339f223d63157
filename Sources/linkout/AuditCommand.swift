import Foundation
import LinkOut
import Storage

/// `linkout audit [--limit N] [--before ID] [--format text|json]`: the audit log, newest first.
enum AuditCommand {
    static func run(_ arguments: [String]) throws -> Int32 {
        let (flags, _) = try CommandLineInterface.parseFlags(
            arguments,
            allowed: ["--limit", "--before", "--format", "--data-dir", "--config"]
        )
        guard let limit = Int(flags["--limit"] ?? "100"), (1...100_000).contains(limit) else {
            throw CommandLineInterface.UsageError(description: "--limit is 1 to 100000")
        }
        let before = try flags["--before"].map { text in
            guard let value = Int64(text), value > 0 else {
                throw CommandLineInterface.UsageError(description: "--before is an entry id")
            }
            return value
        }
        let format = flags["--format"] ?? "text"
        guard format == "text" || format == "json" else {
            throw CommandLineInterface.UsageError(description: "--format must be text or json")
        }
        let configuration = try Configuration.load(
            overrides: .init(configPath: flags["--config"], dataDir: flags["--data-dir"]),
            provider: .noPayments
        )
        let ledger = try CommandLineInterface.openLedgerBesideServer(configuration)
        defer { ledger.close() }
        let entries = try ledger.audit.entries(before: before, limit: limit)
        if format == "json" {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            CommandLineInterface.printOutput(String(decoding: try encoder.encode(entries), as: UTF8.self) + "\n")
            return 0
        }
        for entry in entries {
            let when = Date(timeIntervalSince1970: Double(entry.at) / 1000).formatted(.iso8601)
            var line = "\(entry.id)  \(when)  \(entry.actor) from \(entry.origin)  \(entry.action)"
            if let subject = entry.subject { line += "  \(subject)" }
            if let before = entry.before { line += "  before: \(before)" }
            if let after = entry.after { line += "  after: \(after)" }
            // One entry, one line: what was typed or sent (a path, a reason) cannot forge another entry.
            CommandLineInterface.printOutput(TerminalText.visible(line) + "\n")
        }
        return 0
    }
}
