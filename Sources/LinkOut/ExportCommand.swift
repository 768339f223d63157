import Foundation
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
        let ledger = try Ledger(directory: configuration.dataDir, role: .reader)
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

/// The CSV form of the token ledger (RFC 4180 quoting), shared by the CLI export and the admin API.
enum LedgerCSV {
    static let header = [
        "externalPurchaseId", "environment", "source", "bundleId", "appAppleId", "tokenType", "tokenCreationDate",
        "tokenExpirationDate", "firstSeenAt", "lastSeenAt", "visitCount",
    ]

    static func render(_ rows: [StoredToken]) -> String {
        var lines = [header.joined(separator: ",")]
        for row in rows {
            let fields: [String] = [
                row.externalPurchaseId, row.environment, row.source, row.bundleId, String(row.appAppleId),
                row.tokenType ?? "", String(row.createdAt), row.expiresAt.map(String.init) ?? "",
                String(row.firstSeenAt), String(row.lastSeenAt), String(row.visitCount),
            ]
            lines.append(fields.map(quote).joined(separator: ","))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// Quotes when needed, and defuses leading `=+-@` so a spreadsheet never runs a field as a formula.
    static func quote(_ field: String) -> String {
        var value = field
        if let first = value.first, "=+-@".contains(first), Int64(value) == nil { value = "'" + value }
        guard value.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return value }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
