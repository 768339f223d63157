import Testing

@testable import Storage

/// The parts of the PostgreSQL engine that need no server.
@Suite("PostgreSQL without a server")
struct PostgresPureTests {
    @Test func parametersAreNumberedOutsideQuotes() {
        #expect(
            PostgresConnection.numbered("SELECT ? , '?' , \"a?\" FROM t WHERE x = ? AND y = ?")
                == "SELECT $1 , '?' , \"a?\" FROM t WHERE x = $2 AND y = $3"
        )
        #expect(PostgresConnection.numbered("SELECT 1") == "SELECT 1")
    }

    @Test func singleRowInsertsLoseSQLitesOrFail() {
        let insert = "INSERT OR FAIL INTO visits (a) VALUES (?) ON CONFLICT(a) DO NOTHING"
        #expect(SQLDialect.postgres.statement(insert) == "INSERT INTO visits (a) VALUES (?) ON CONFLICT(a) DO NOTHING")
        #expect(SQLDialect.sqlite.statement(insert) == insert)
    }

    @Test func arrayLiteralsQuoteEscapeAndKeepNulls() {
        #expect(PostgresVisitWriter.arrayLiteral([]) == "{}")
        #expect(
            PostgresVisitWriter.arrayLiteral(["a", nil, "b\"c", "d\\e", "NULL"]) == #"{"a",NULL,"b\"c","d\\e","NULL"}"#
        )
    }

    @Test func passwordsNeverShowInTheURL() {
        let uri = PostgresTarget(url: "postgresql://linkout:s3cret@db:5432/linkout", password: nil)
        #expect(!uri.redactedURL.contains("s3cret"))
        #expect(uri.redactedURL.contains("db:5432/linkout"))
        let query = PostgresTarget(url: "postgresql://db/linkout?user=x&password=s3cret&sslmode=require", password: nil)
        #expect(!query.redactedURL.contains("s3cret"))
        #expect(query.redactedURL.contains("sslmode=require"))
        let keywords = PostgresTarget(url: "host=db dbname=linkout password=s3cret user=x", password: nil)
        #expect(!keywords.redactedURL.contains("s3cret"))
        #expect(keywords.redactedURL.contains("user=x"))
        let hosts = PostgresTarget(url: "postgresql://linkout:s3cret@db1:5432,db2:5432/linkout", password: nil)
        #expect(hosts.redactedURL == "postgresql://linkout:***@db1:5432,db2:5432/linkout")
        let quoted = PostgresTarget(url: "host=db password='s3 cret' user=x", password: nil)
        #expect(!quoted.redactedURL.contains("s3") && !quoted.redactedURL.contains("cret"))
        #expect(quoted.redactedURL.contains("user=x"))
        let plain = PostgresTarget(url: "postgresql://linkout@db/linkout", password: "s3cret")
        #expect(plain.redactedURL == "postgresql://linkout@db/linkout")
    }

    /// A generated password holds `/` (base64): read as the path's start, it was left in the clear. libpq's own
    /// message quotes the part of a password it cannot read, or the whole URI: masked too. No server needed: the
    /// URI is refused before any connection.
    @Test func passwordsWithSlashesAndLibpqsOwnWordsAreMasked() {
        let slash = PostgresTarget(url: "postgresql://linkout:Zm9v/YmFyLEAK1@db:5432/linkout", password: nil)
        #expect(slash.redactedURL == "postgresql://linkout:***@db:5432/linkout")
        let targets = [
            PostgresTarget(url: "postgresql://linkout:pw%zzLEAK2@127.0.0.1:1/linkout", password: nil),
            PostgresTarget(url: "postgresql://linkout:pwLEAK3@[::1/linkout", password: nil),
            PostgresTarget(url: "host=127.0.0.1 port=1 password='pw LEAK4' dbname=x connect_timeout=1", password: nil),
        ]
        for target in targets {
            #expect {
                _ = try PostgresConnection(target: target)
            } throws: { error in
                let message = (error as? StorageError)?.message ?? ""
                return !message.contains("LEAK") && message.contains("cannot connect to")
            }
        }
        // libpq reads a password's part before a `/` as a port, and quotes it: masked, and such a URI is refused
        // at the configuration (`uriProblem`), unless the `/` follows a port.
        let halves = PostgresTarget(url: "postgresql://linkout:Xk3fQLEAK/P9+qZz@127.0.0.1:1/linkout", password: nil)
        #expect {
            _ = try PostgresConnection(target: halves)
        } throws: { error in
            let message = (error as? StorageError)?.message ?? ""
            return !message.contains("LEAK") && !message.contains("P9+qZz")
        }
        #expect(PostgresTarget.uriProblem(halves.url)?.contains("percent-encode") == true)
        #expect(PostgresTarget.uriProblem("postgresql://linkout:a?b@db/linkout") == nil)  // libpq reads it
        #expect(PostgresTarget.uriProblem("postgresql://db:5432/linkout@x") == nil)
        #expect(PostgresTarget.uriProblem("postgresql://linkout:Zm9v%2FYmFy@db:5432/linkout") == nil)
        #expect(PostgresTarget.uriProblem("postgresql://db:5432/linkout?user=a@b") == nil)
        #expect(PostgresTarget.uriProblem("postgresql://linkout@db/linkout") == nil)
        #expect(PostgresTarget.uriProblem("host=db password=a/b") == nil)
        let keywords = PostgresTarget(url: "host=db password=s3cret", password: "an0ther")
        #expect(keywords.redacting("FATAL: password s3cret or an0ther refused") == "FATAL: password *** or *** refused")
    }

    @Test func postgresErrorsKeepTheirKind() {
        #expect(StorageError.postgres("23505", "duplicate").code == .constraint)
        #expect(StorageError.postgres("25006", "read only").code == .readOnly)
        #expect(StorageError.postgres("53100", "disk full").code == .diskFull)
        #expect(StorageError.postgres("57P01", "terminating").code == .unavailable)
        #expect(StorageError.postgres("08006", "connection failure").code == .unavailable)
        #expect(StorageError.postgres("42P01", "no table").code == .postgres("42P01"))
    }

    @Test func theSchemaTranslatesForPostgreSQL() {
        let sql = "CREATE TABLE v (\n    id INTEGER PRIMARY KEY,\n    at INTEGER NOT NULL\n) WITHOUT ROWID;"
        #expect(SQLDialect.sqlite.schema(sql) == sql)
        #expect(
            SQLDialect.postgres.schema(sql)
                == "CREATE TABLE v (\n    id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,\n    at BIGINT NOT NULL\n);"
        )
    }
}
