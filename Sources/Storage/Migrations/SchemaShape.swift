/// What a SQLite ledger at a schema version holds: every table (with its columns), index and trigger that the
/// migrations to that version make, found by making them in memory. A ledger edited by hand (a table, a column
/// or the audit log's triggers dropped) passes SQLite's integrity check and says it is at that version, but the
/// server stops on it at its first query, or runs with an audit log anyone with the file can rewrite: a restore
/// refuses it before it takes a ledger's place, and `linkout check` says what it lacks.
enum SchemaShape {
    /// Objects made or dropped outside the migrations' transactions (`Migrations.afterMigrating`: a statement
    /// added there names its object here too): a start cut short leaves a ledger with or without them, and both
    /// run.
    static let either: Set<String> = ["visits_token", "visits_token_later", "tokens_by_id", "checkouts_by_id"]

    /// What the ledger on `connection`, at schema `version`, lacks, as "table reports", "column tokens.bundle_id",
    /// "trigger audit_log_no_delete"; empty when it has all (more is allowed: nothing reads it).
    static func missing(in connection: SQLiteConnection, version: Int64) throws(StorageError) -> [String] {
        let fresh = try SQLiteConnection(path: SQLiteConnection.inMemory)
        try Migrations.apply(to: fresh, dialect: .sqlite, now: 0, upTo: version)
        let expected = try objects(fresh)
        let present = try objects(connection)
        var missing: [String] = []
        for (name, object) in expected.sorted(by: { $0.key < $1.key }) where !either.contains(name) {
            // A missing table's indexes and triggers are missing with it: the table says it.
            if object.table != name, present[object.table] == nil { continue }
            guard let found = present[name], found.type == object.type else {
                missing.append("\(object.type) \(name)")
                continue
            }
            // A trigger that is there but does nothing (the audit log's, rewritten) protects nothing.
            if object.type == "trigger", found.body != object.body { missing.append("trigger \(name) as written") }
            missing += object.columns.subtracting(found.columns).sorted().map { "column \(name).\($0)" }
        }
        return missing
    }

    /// The first few of `missing`, and how many more.
    static func listed(_ missing: [String]) -> String {
        missing.prefix(3).joined(separator: ", ") + (missing.count > 3 ? " and \(missing.count - 3) more" : "")
    }

    /// Every table, index and trigger by name, with its table, a table's columns and a trigger's statement.
    private static func objects(_ connection: SQLiteConnection) throws(StorageError)
        -> [String: (type: String, table: String, columns: Set<String>, body: String)]
    {
        var objects: [String: (type: String, table: String, columns: Set<String>, body: String)] = [:]
        let rows = try connection.query(
            """
            SELECT type, name, tbl_name, sql FROM sqlite_master
            WHERE type IN ('table', 'index', 'trigger') AND name NOT LIKE 'sqlite_%'
            """
        )
        for row in rows {
            guard let type = row[0].text, let name = row[1].text, let table = row[2].text else { continue }
            var columns: Set<String> = []
            if type == "table" {
                columns = Set(
                    try connection.query("SELECT name FROM pragma_table_info(?)", [.text(name)]).compactMap {
                        $0.first?.text
                    }
                )
            }
            // A trigger's statement, its spacing aside: what it does.
            let body =
                type == "trigger"
                ? (row[3].text ?? "").split(whereSeparator: \.isWhitespace).joined(separator: " ") : ""
            objects[name] = (type, table, columns, body)
        }
        return objects
    }
}
