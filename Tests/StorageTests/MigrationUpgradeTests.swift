import Foundation
import TestSupport
import Testing

@testable import Storage

/// Every migration from the ledger the release before it left: the migrations up to N − 1 are applied, every
/// table of that time gets a row (values of the right kind for its columns, a real line item where one is
/// read), then migration N and the rest run. Each must apply, keep the rows, and leave exactly the schema a
/// new ledger gets. On SQLite, or on PostgreSQL in the PostgreSQL pass.
@Suite("Ledger migrations")
struct MigrationUpgradeTests {
    /// A connection to a fresh database: a SQLite file in `folder`, or a schema of its own on the server under
    /// test.
    static func connect(_ folder: LedgerTests.TemporaryFolder, _ name: String) throws -> (any SQLConnection, SQLDialect)
    {
        if let url = try TestDatabase.postgresURL(for: folder.path + "-" + name) {
            return (try PostgresConnection(target: PostgresTarget(url: url, password: nil)), .postgres)
        }
        return (try SQLiteConnection(path: folder.path + "/\(name).sqlite"), .sqlite)
    }

    /// The tables and their columns (name, whether it takes NULL, whether it holds integers), in order.
    static func tables(_ connection: any SQLConnection, _ dialect: SQLDialect) throws -> [String: [Column]] {
        var tables: [String: [Column]] = [:]
        switch dialect {
        case .sqlite:
            let names = try connection.query(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
            ).compactMap { $0.first?.text }
            for name in names {
                tables[name] = try connection.query("PRAGMA table_info(\(name))").map { row in
                    Column(
                        name: row[1].text ?? "",
                        nullable: row[3].integer == 0 && row[5].integer == 0,
                        integer: (row[2].text ?? "").uppercased().contains("INT")
                    )
                }
            }
        case .postgres:
            for row in try connection.query(
                """
                SELECT table_name, column_name, is_nullable, data_type, column_default FROM information_schema.columns
                WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position
                """
            ) {
                let column = Column(
                    name: row[1].text ?? "",
                    nullable: row[2].text == "YES" || row[4].text != nil,
                    integer: (row[3].text ?? "").contains("int")
                )
                tables[row[0].text ?? "", default: []].append(column)
            }
        }
        return tables
    }

    struct Column {
        var name: String
        var nullable: Bool
        var integer: Bool
    }

    /// A value a row of that time could hold in `column` of `table`.
    static func value(_ table: String, _ column: Column) -> SQLValue {
        if column.integer { return .integer(1_706_169_600_000) }
        switch (table, column.name) {
        case ("line_items", "body"):
            return .text(
                #"{"lineItemId":"li-1","creationDate":1706169600000,"eventType":"BUY","productType":"ONE_TIME","#
                    + #""productIdentifier":"pro","quantity":1,"amountTaxInclusive":29990,"amountTaxExclusive":29990,"#
                    + #""taxAmount":0,"netAmountTaxExclusive":29990,"reportingCurrency":"EUR","pricingCurrency":"EUR","#
                    + #""taxCountry":"DEU"}"#
            )
        case (_, "environment"): return .text("sandbox")
        case (_, "state"): return .text("pending")
        case (_, "status"): return .text(table == "reports" ? "LINE_ITEM" : "paid")
        case (_, "source"): return .text("url")
        case (_, "provider"): return .text("demo")
        case (_, "kind"): return .text("oneTime")
        case (_, "external_purchase_id"): return .text("SANDBOX_ep-1")
        case (_, "line_item_id"): return .text("li-1")
        case (_, "bundle_id"): return .text("com.example")
        case (_, let name) where name.hasSuffix("currency"): return .text("EUR")
        case (_, "body"), (_, "value"): return .text("{}")
        default: return .text("x-\(column.name)")
        }
    }

    static func seed(_ connection: any SQLConnection, _ dialect: SQLDialect) throws -> [String: Int64] {
        var counts: [String: Int64] = [:]
        for (table, all) in try tables(connection, dialect) where table != "schema_migrations" {
            // Columns that take NULL or have a default are left to it (PostgreSQL's identity ids among them).
            let columns = all.filter { !$0.nullable }
            let names = columns.map(\.name).joined(separator: ", ")
            let marks = Array(repeating: "?", count: columns.count).joined(separator: ", ")
            try connection.query(
                "INSERT INTO \(table) (\(names)) VALUES (\(marks))",
                columns.map { value(table, $0) }
            )
            counts[table] = try connection.query("SELECT count(*) FROM \(table)").first?.first?.integer ?? 0
        }
        return counts
    }

    /// The schema as names: tables with their columns, and indexes.
    static func shape(_ connection: any SQLConnection, _ dialect: SQLDialect) throws -> [String] {
        let columns = try tables(connection, dialect).flatMap { table, columns in
            columns.map { "\(table).\($0.name)" }
        }
        let indexes =
            switch dialect {
            case .sqlite:
                try connection.query(
                    "SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%'"
                )
            case .postgres:
                try connection.query(
                    "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND indexname NOT LIKE '%_pkey'"
                )
            }
        return (columns + indexes.compactMap { $0.first?.text.map { "index " + $0 } }).sorted()
    }

    @Test func eachMigrationUpgradesTheLedgerItsPredecessorLeft() throws {
        let folder = LedgerTests.TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true)
        let (fresh, dialect) = try Self.connect(folder, "fresh")
        try Migrations.apply(to: fresh, dialect: dialect, now: 1)
        let expected = try Self.shape(fresh, dialect)
        for migration in Migrations.all.dropFirst() {
            let (connection, _) = try Self.connect(folder, "v\(migration.version)")
            try Migrations.apply(to: connection, dialect: dialect, now: 1, upTo: migration.version - 1)
            let seeded = try Self.seed(connection, dialect)
            try Migrations.apply(to: connection, dialect: dialect, now: 2)
            for (table, count) in seeded {
                // Only tables a later migration drops, or derived ones it rebuilds, may lose their row.
                guard let kept = try? connection.query("SELECT count(*) FROM \(table)").first?.first?.integer else {
                    continue
                }
                #expect(kept >= count, "migration \(migration.version) lost the rows of \(table)")
            }
            #expect(
                try Self.shape(connection, dialect) == expected,
                "from version \(migration.version - 1) the schema differs from a new ledger's"
            )
            if dialect == .sqlite {
                #expect(try connection.query("PRAGMA integrity_check").first?.first?.text == "ok")
            }
        }
    }
}
