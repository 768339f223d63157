import Foundation
import LinkOut
import Storage

/// `linkout export`: the token ledger as CSV or JSON on standard output (no raw tokens).
enum ExportCommand {
    static func run(_ arguments: [String]) throws -> Int32 {
        let (flags, _) = try CommandLineInterface.parseFlags(
            arguments,
            allowed: ["--format", "--data-dir", "--config"]
        )
        let format = flags["--format"] ?? "csv"
        guard format == "csv" || format == "json" else {
            throw CommandLineInterface.UsageError(description: "--format must be csv or json")
        }
        let configuration = try Configuration.load(
            overrides: .init(configPath: flags["--config"], dataDir: flags["--data-dir"])
        )
        let ledger = try Ledger(directory: configuration.storage.dataDir, role: .reader)
        defer { ledger.close() }
        let rows = try ledger.tokens()
        if format == "json" {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            CommandLineInterface.printOutput(String(decoding: try encoder.encode(rows), as: UTF8.self) + "\n")
        } else {
            CommandLineInterface.printOutput(LedgerCSV.render(rows))
        }
        return 0
    }
}
