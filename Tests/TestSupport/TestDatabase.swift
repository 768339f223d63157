import CLibPQ
import Foundation

/// The database the storage, landing and reporting tests run on: SQLite in their temporary folder, or, when
/// `LINKOUT_TEST_POSTGRES_URL` names a PostgreSQL server (`make test` starts a throwaway one for its
/// PostgreSQL pass), a schema of that folder's own on it, so tests stay apart and a restarted test finds its data.
public enum TestDatabase {
    /// The PostgreSQL server under test, or nil for SQLite.
    public static var postgresURL: String? {
        ProcessInfo.processInfo.environment["LINKOUT_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A URL whose sessions use a schema named after `folder` (created if missing), or nil for SQLite.
    public static func postgresURL(for folder: String) throws -> String? {
        guard let server = postgresURL else { return nil }
        let name = URL(fileURLWithPath: folder).lastPathComponent.lowercased()
        let schema =
            "t_" + String(name.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) ? Character($0) : "_" })
        try execute("CREATE SCHEMA IF NOT EXISTS \(schema)", on: server)
        let separator = server.contains("?") ? "&" : "?"
        return server + separator + "options=-csearch_path%3D\(schema)"
    }

    /// A new, empty database on the test server (for tests that take a whole database down), or nil for SQLite.
    public static func freshDatabase() throws -> (name: String, url: String)? {
        guard let server = postgresURL, let slash = server.range(of: "/", options: .backwards) else { return nil }
        let name = "linkout_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try execute("CREATE DATABASE \(name)", on: server)
        return (name, String(server[..<slash.upperBound]) + name)
    }

    /// Runs one statement on the server (as the tests' superuser), failing with the server's words.
    public static func execute(_ sql: String, on url: String) throws {
        _ = try values(sql, on: url)
    }

    /// Runs one statement on the server and returns its first column, row by row.
    public static func values(_ sql: String, on url: String) throws -> [String] {
        guard let connection = PQconnectdb(url) else { throw Failure(message: "out of memory") }
        defer { PQfinish(connection) }
        guard PQstatus(connection) == CONNECTION_OK else {
            throw Failure(message: "cannot connect to \(url): " + String(cString: PQerrorMessage(connection)))
        }
        let result = PQexec(connection, sql)
        defer { PQclear(result) }
        let status = result.map(PQresultStatus) ?? PGRES_FATAL_ERROR
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw Failure(message: "\(sql): " + String(cString: PQerrorMessage(connection)))
        }
        guard status == PGRES_TUPLES_OK else { return [] }
        return (0..<PQntuples(result)).map { String(cString: PQgetvalue(result, $0, 0)) }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }
}
