import Domain
import Foundation
import LinkOut
import Storage

/// `linkout erase --email ADDRESS | --account-token UUID`: a person's data taken out of the ledger (see
/// `Erasure`), recorded in the audit trail. Safe next to a running server: each step is a transaction of its own
/// (the landings' campaign values a span of visits at a time), so the server's writes wait for no more than one.
enum EraseCommand {
    /// Free space an erasure asks of a SQLite ledger's disk: eight times what `linkout check` asks of a server's.
    static let leastFreeDisk = 8 * Ledger.nearlyFullBytes

    static func run(_ arguments: [String]) throws -> Int32 {
        let (flags, _) = try CommandLineInterface.parseFlags(
            arguments,
            allowed: ["--email", "--account-token", "--data-dir", "--config"]
        )
        // Pasted addresses and ids often carry a space at either end, which no stored body has.
        let email = flags["--email"]?.trimmingCharacters(in: .whitespacesAndNewlines)
        let account = flags["--account-token"]?.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (email == nil) != (account == nil) else {
            throw CommandLineInterface.UsageError(
                description: "use 'linkout erase --email ADDRESS' or '--account-token UUID'"
            )
        }
        // An address holds no space, control or hidden character and is at most 254 bytes (RFC 5321): a typo
        // with one read as an erasure done (nothing found, an audit entry made), and a long one as SQLite's
        // "LIKE or GLOB pattern too complex".
        if let email,
            email.utf8.count < 3 || email.utf8.count > 254 || !email.contains("@")
                || email.unicodeScalars.contains(where: {
                    $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F || HiddenCharacters.contains($0)
                })
        {
            throw CommandLineInterface.UsageError(
                description: "--email must be an e-mail address (no space or control character, at most 254 bytes)"
            )
        }
        if let account, UUID(uuidString: account) == nil {
            throw CommandLineInterface.UsageError(description: "--account-token must be a UUID")
        }
        let configuration = try Configuration.load(
            overrides: .init(configPath: flags["--config"], dataDir: flags["--data-dir"]),
            provider: .noPayments
        )
        let ledger = try CommandLineInterface.openLedgerBesideServer(configuration)
        defer { ledger.close() }
        // An erasure rewrites through the WAL beside a running server: on a disk it fills, the server's landings
        // are refused until space is freed (503 for as long as nobody looks).
        if configuration.storage.postgresURL == nil,
            let free = Ledger.freeBytes(in: configuration.storage.dataDir), free < Self.leastFreeDisk
        {
            CommandLineInterface.printError(
                "linkout erase: the data folder's disk has \(free >> 20) MB free; an erasure writes through the WAL "
                    + "and needs \(Self.leastFreeDisk >> 20) MB, or a running server's landings would be refused: "
                    + "free space on it, then run erase again\n"
            )
            return 1
        }
        let erasure = Erasure(ledger: ledger)
        let summary: Erasure.Summary
        do {
            summary = try email.map { try erasure.erase(email: $0) } ?? erasure.erase(accountToken: account ?? "")
        } catch {
            // What the failed transaction wrote to the WAL is given back to the disk.
            _ = ledger.privacy.foldWAL()
            throw error
        }
        let freePagesNote =
            summary.freePagesLeft.map {
                "; the ledger's free pages could not be zeroed (\($0)): older copies may be left there, run erase "
                    + "again once that is fixed"
            } ?? ""
        let walNote =
            ledger.privacy.foldWAL()
            ? ""
            : "; the WAL is still read by the server and keeps old frames until it is reused (run erase again later)"
        // An address leads to the person's payments, not to the account the app knows them by: said, so the
        // operator erases that too (`--account-token`), which unbinds their credentials.
        let accountNote =
            email == nil
            ? "" : "; the account token the app knows the person by, if any, stays until erased too (--account-token)"
        let unknown =
            summary.unknownAccount
            ? "; no token or credential names this account token (mistyped?): it is marked erased all the same, so "
                + "a purchase made under it from now on is named [erased]"
            : ""
        CommandLineInterface.printOutput(
            "erased: \(summary.bodies) stored bodies rewritten without the person's data, \(summary.credentials) "
                + "credentials unbound, \(summary.visits) visits' campaign values erased; reports to Apple and amounts "
                + "unchanged\(accountNote)\(unknown)\(freePagesNote)\(walNote); backups made before keep the data "
                + "until they are rotated out, and the visit journal's current segment keeps landings as they arrived "
                + "until it is full and deleted\n"
        )
        return 0
    }
}
