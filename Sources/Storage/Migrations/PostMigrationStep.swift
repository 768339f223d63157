/// Work after the migrations that this release's code must do, because what it makes is derived by code that
/// changes between releases: a copy frozen in a migration would make rows as an old release computed them, which
/// the rows this release writes would then disagree with. Each step runs after every migration `Migrations.apply`
/// ran, in a transaction of its own, whenever the ledger still needs it (read from the ledger, so a crash between
/// the migrations and the step leaves it for the next start).
struct PostMigrationStep: Sendable {
    let name: String
    /// The migration that creates the tables the step fills: until it is applied the step waits.
    let after: Int64
    /// Whether the ledger needs the step now; `migrated` holds the migrations this start applied.
    let isNeeded: @Sendable (any SQLConnection, _ migrated: Set<Int64>) throws(StorageError) -> Bool
    /// The step; `applied` holds every migration the ledger has.
    let run: @Sendable (any SQLConnection, SQLDialect, _ applied: Set<Int64>) throws(StorageError) -> Void

    /// The money rows and their daily roll-up (migration 17) are made from the stored line items by `MoneyRows`,
    /// the code that keeps them in step from then on, under no commission regime (the server classifies them
    /// again when it starts with regimes: `MoneyStore.useRegimes`). Needed when migration 17 has just made the
    /// tables, and while they were never filled (a crash before the step): every rebuild records the regimes it
    /// classified under (`settings.money_regimes`), so a ledger without that setting has tables never filled.
    static let rebuildMoneyRows = PostMigrationStep(
        name: "rebuild the money rows",
        after: 17
    ) { connection, migrated throws(StorageError) in
        if migrated.contains(17) { return true }
        return try connection.query("SELECT value FROM settings WHERE name = 'money_regimes'").isEmpty
    } run: { connection, dialect, applied throws(StorageError) in
        try MoneyRows.rebuild(in: connection, dialect: dialect, regimes: [])
        // Migration 18 copies each line item's creation date from its money row; on a ledger that gained the
        // money tables in the same upgrade the rows were not made yet, so the copy is done now, for the line
        // items it found without one.
        if applied.contains(18) {
            try connection.execute(
                """
                UPDATE line_items SET creation_date = (SELECT m.creation_date FROM money_line_items m
                    WHERE m.line_item_row = line_items.id)
                WHERE creation_date IS NULL
                """
            )
        }
    }
}
