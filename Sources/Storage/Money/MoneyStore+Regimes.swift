public import Domain

extension MoneyStore {
    /// Puts `regimes` in force for this process's writes and, when they differ from the ones the money rows were
    /// classified under (the fingerprint in `settings.money_regimes`), classifies every line item again and
    /// rebuilds the roll-up, in one transaction. Returns whether it rebuilt.
    @discardableResult
    public func useRegimes(_ regimes: [CommissionRegime]) throws(StorageError) -> Bool {
        database.commissionRegimes.set(regimes)
        let fingerprint = CommissionRegime.fingerprint(regimes)
        return try database.writer.write { [dialect = database.dialect] connection throws(StorageError) in
            if let serialize = dialect.serializeOnKey { try connection.query(serialize, [.text("money-rebuild")]) }
            let stored = try connection.query("SELECT value FROM settings WHERE name = 'money_regimes'").first?[0].text
            guard stored != fingerprint else { return false }
            try MoneyRows.rebuild(in: connection, dialect: dialect, regimes: regimes)
            return true
        }
    }

    /// The regimes in force for this process.
    public var regimes: [CommissionRegime] { database.commissionRegimes.current }
}
