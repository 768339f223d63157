import LinkOut
import Storage

extension CommandLineInterface {
    /// Opens the ledger for a command beside the server (it reads the tables, never the server's journal, and never
    /// upgrades or creates a ledger), and says on standard error when the journal holds visits a stopped server did
    /// not fold in: a server killed with a backlog leaves them for its next start, and until then what the command
    /// reads leaves them out (an export after a crash was short by thousands of acknowledged landings, silently).
    static func openLedgerBesideServer(_ configuration: Configuration) throws(StorageError) -> Ledger {
        let ledger = try configuration.openLedger(role: .reader, upgrade: .never)
        let waiting = ledger.visitsAwaitingReplay()
        if waiting > 0 {
            printError(
                "warning: \(waiting) landing(s) in the journal are not in the tables yet (the server stopped before "
                    + "folding them in); start the server to apply them, then run this again for a complete answer\n"
            )
        }
        return ledger
    }
}
