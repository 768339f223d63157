package import Storage

extension Configuration {
    /// Opens the configured ledger with the configured commission regimes in force, so every entry point (the
    /// server, `linkout notifications recover`, `linkout report …`, the rest of the command line) classifies the
    /// line items it writes under the same regimes; a ledger classified under other ones is classified again
    /// first (`MoneyStore.useRegimes`). Opening it without them classified with none.
    package func openLedger(role: Ledger.Role = .owner, upgrade: Ledger.Upgrade = .migrate) throws(StorageError)
        -> Ledger
    {
        let ledger = try storage.openLedger(role: role, upgrade: upgrade)
        do {
            try ledger.money.useRegimes(commission.regimes)
        } catch {
            ledger.close()
            throw error
        }
        return ledger
    }
}
