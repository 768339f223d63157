package import Storage

extension Configuration {
    /// `storage` section.
    package struct Storage: Sendable {
        /// Where the SQLite ledger lives (`LINKOUT_DATA_DIR`, `--data-dir`). Default `data`.
        package var dataDir = "data"
        /// `full` (fsync every commit; survives power loss) or `normal` (survives a killed process). Default full.
        package var durability = "full"
        /// A PostgreSQL database instead of SQLite (`LINKOUT_DATABASE_URL`), for several instances on one ledger:
        /// a libpq URI such as `postgresql://linkout@db:5432/linkout`. Default none: SQLite under `dataDir`.
        package var postgresURL: String?
        /// The PostgreSQL password, only from `LINKOUT_DATABASE_PASSWORD` or the file named by
        /// `LINKOUT_DATABASE_PASSWORD_FILE` (never config.json, never logged).
        package var postgresPassword: String?
        /// How long an instance keeps outbox work it claimed (a report to Apple, a webhook) before another
        /// instance on the same database may take it over: longer than a send takes. Default 120.
        package var leaseSeconds: Int64 = 120
        /// Longest a PostgreSQL statement may run before it fails (`storage.statementTimeoutMilliseconds`).
        package var statementTimeoutMilliseconds = 5_000

        package init() {}

        /// Where the PostgreSQL ledger is, when one is configured.
        package var postgresTarget: PostgresTarget? {
            guard let postgresURL else { return nil }
            var target = PostgresTarget(url: postgresURL, password: postgresPassword)
            target.statementTimeoutMilliseconds = statementTimeoutMilliseconds
            return target
        }

        /// Opens the configured ledger: PostgreSQL when a URL is set (the role does not matter there: nothing is
        /// local), otherwise SQLite under `dataDir` as `role`.
        package func openLedger(role: Ledger.Role = .owner, upgrade: Ledger.Upgrade = .migrate) throws(StorageError)
            -> Ledger
        {
            if let postgresTarget { return try Ledger(postgres: postgresTarget, upgrade: upgrade) }
            return try Ledger(
                directory: dataDir,
                durability: durability == "normal" ? .normal : .full,
                role: role,
                upgrade: upgrade
            )
        }

        /// `url`, unless libpq would refuse it quoting its password (`PostgresTarget.uriProblem`): refused here, where
        /// the message names the field and not the password.
        static func postgresURL(_ url: String, field: String) throws(ConfigurationError) -> String {
            // libpq reads a value that starts `postgresql://` or `postgres://` (exactly) as a URI, one with `=` as
            // `key=value` settings, and anything else as a database name. A URI of another scheme (`mysql://`)
            // failed later as a connection error (exit 1) naming no field. Only the scheme is quoted: the rest
            // may hold a password.
            if !url.hasPrefix("postgresql://"), !url.hasPrefix("postgres://"), !url.contains("="),
                let scheme = url.firstMatch(of: /^[A-Za-z][A-Za-z0-9+.\-]*:\/\//)
            {
                throw ConfigurationError(
                    field: field,
                    problem: "must be a postgresql:// URL (or libpq's key=value settings), not \(scheme.0)…"
                )
            }
            if let problem = PostgresTarget.uriProblem(url) { throw ConfigurationError(field: field, problem: problem) }
            return url
        }

        static func read(_ section: JSONFields) throws(ConfigurationError) -> Storage {
            try section.rejectUnknownKeys([
                "dataDir", "durability", "postgresURL", "statementTimeoutMilliseconds", "leaseSeconds",
            ])
            var storage = Storage()
            storage.dataDir = try Configuration.parseDataDir(
                try section.string("dataDir", default: storage.dataDir),
                field: "storage.dataDir"
            )
            storage.durability = try section.string("durability", default: storage.durability)
            let url = try section.string("postgresURL", default: "")
            storage.postgresURL = url.isEmpty ? nil : try Self.postgresURL(url, field: "storage.postgresURL")
            storage.leaseSeconds = try section.integer("leaseSeconds", default: storage.leaseSeconds, range: 2...3600)
            storage.statementTimeoutMilliseconds = Int(
                try section.integer(
                    "statementTimeoutMilliseconds",
                    default: Int64(storage.statementTimeoutMilliseconds),
                    range: 100...600_000
                )
            )
            guard ["full", "normal"].contains(storage.durability) else {
                throw ConfigurationError(field: "storage.durability", problem: "must be full or normal")
            }
            return storage
        }
    }
}
