import Domain
import Lifecycle
import LinkOut
import Logging
import Storage

/// `linkout close --month YYYY-MM [--format json|csv|text] [--environment production|sandbox] [--limit N]`:
/// the close of a UTC month. Exits 0 only when the month is closed: 3 while it is open, 4 while closing, 5 when
/// late; 64 (EX_USAGE) for a bad argument, 2 for a bad configuration, 1 when the ledger cannot be read.
enum CloseCommand {
    static let usageExit: Int32 = 64

    static func exitCode(_ state: CloseReport.State) -> Int32 {
        switch state {
        case .closed: 0
        case .open: 3
        case .closing: 4
        case .late: 5
        }
    }

    static func run(_ arguments: [String]) throws -> Int32 {
        let request: (month: CloseMonth, format: CloseReport.Format, environment: Environment, limit: Int)
        let flags: [String: String]
        do {
            (flags, _) = try CommandLineInterface.parseFlags(
                arguments,
                allowed: ["--month", "--format", "--environment", "--limit", "--config", "--data-dir"]
            )
            request = try parse(flags)
        } catch {
            CommandLineInterface.printError("linkout close: \(error)\n")
            return usageExit
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
        // Line items a running server wrote since its last close pass count at once.
        try LineItemDating(ledger: ledger).dateAll()
        let report = try MonthlyClose(ledger: ledger, configuration: configuration).report(
            month: request.month,
            environment: request.environment,
            now: Clock.system.nowMilliseconds(),
            status: reporting.status,
            listLimit: request.limit,
            includeTotals: request.format != .csv
        )
        CommandLineInterface.printOutput(report.rendered(as: request.format))
        return exitCode(report.state)
    }

    private static func parse(_ flags: [String: String]) throws(CommandLineInterface.UsageError) -> (
        month: CloseMonth, format: CloseReport.Format, environment: Environment, limit: Int
    ) {
        guard let text = flags["--month"] else {
            throw .init(description: "--month YYYY-MM is required (a UTC calendar month, e.g. 2026-11)")
        }
        guard let month = CloseMonth(parsing: text) else {
            throw .init(
                description: "--month must be a UTC calendar month written YYYY-MM (e.g. 2026-11), found '\(text)'"
            )
        }
        guard let format = CloseReport.Format(rawValue: flags["--format"] ?? "text") else {
            throw .init(description: "--format must be json, csv or text")
        }
        guard let environment = Environment(rawValue: flags["--environment"] ?? "production") else {
            throw .init(description: "--environment must be production or sandbox")
        }
        let limitText = flags["--limit"] ?? "100"
        guard let limit = Int(limitText), (1...100_000).contains(limit) else {
            throw .init(description: "--limit must be a whole number from 1 to 100000")
        }
        return (month, format, environment, limit)
    }
}
