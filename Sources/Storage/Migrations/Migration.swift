/// One version of the ledger's schema: its number, what it is for, and its steps, run in order in one
/// transaction with its row in `schema_migrations`. Every step is fixed text (the rules are at the top of
/// `Migrations`): what a migration does never depends on code that changes after its release.
struct Migration: Sendable {
    enum Step: Sendable {
        /// SQL both engines run, written for SQLite and adapted by `SQLDialect.schema`.
        case sql(String)
        /// SQL in each engine's own language (triggers), chosen by the engine.
        case forEngine(@Sendable (SQLDialect) -> String)
    }

    let version: Int64
    let name: String
    let steps: [Step]

    /// A migration of `sql`, followed by `more` steps.
    init(version: Int64, name: String, sql: String, then more: Step...) {
        self.version = version
        self.name = name
        steps = [.sql(sql)] + more
    }

    /// A migration of `steps` alone.
    init(version: Int64, name: String, steps: [Step]) {
        self.version = version
        self.name = name
        self.steps = steps
    }

    /// Runs the steps on `connection` (inside the caller's transaction).
    func run(on connection: any SQLConnection, dialect: SQLDialect) throws(StorageError) {
        for step in steps {
            switch step {
            case .sql(let sql): try connection.execute(dialect.schema(sql))
            case .forEngine(let sql): try connection.execute(sql(dialect))
            }
        }
    }
}
