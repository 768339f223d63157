import Domain
import ExternalPurchase
import Foundation
import LinkOut
import Storage
import TestSupport
import Testing

/// The PostgreSQL ledger's backup is the database server's: `pg_dump` of a live ledger (a consistent snapshot,
/// taken while the server lands visits), restored with `pg_restore` into an empty database, which a server then
/// opens with everything that was acknowledged. Run in the PostgreSQL pass only (`make test` skips it on SQLite).
@Suite("PostgreSQL dump and restore")
struct PostgresDumpTests {
    static func run(_ tool: String, _ arguments: [String]) throws -> (status: Int32, errors: String) {
        let errors = Pipe()
        let process = try ChildProcess(
            "/usr/bin/env",
            [tool] + arguments,
            errors: errors.fileHandleForWriting.fileDescriptor
        )
        try errors.fileHandleForWriting.close()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (process.waitForExit(), text)
    }

    @Test func aDumpOfALiveLedgerRestoresIntoAnEmptyDatabaseWithEveryAcknowledgedLanding() throws {
        let source = try #require(
            try TestDatabase.freshDatabase(),
            "LINKOUT_TEST_POSTGRES_URL must name the test server"
        )
        let target = try #require(try TestDatabase.freshDatabase())
        let dump = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-\(UUID()).dump")
        defer { try? FileManager.default.removeItem(at: dump) }
        var acknowledged: [String] = []
        do {
            let live = try LiveApplication {
                $0.storage.postgresURL = source.url
                $0.server.rateLimitPerSecond = 0  // 200 landings from one client, on purpose
            }
            for _ in 0..<200 {
                let token = TokenMinter.mint(
                    bundleId: "com.example",
                    appAppleId: 1_234_567_890,
                    sandbox: true,
                    tokenType: nil,
                    nowMilliseconds: Int64(Date().timeIntervalSince1970 * 1000)
                )
                let landing = try live.get("/?externalPurchaseToken=\(TokenMinter.encode(token))&bundleId=com.example")
                if landing.status == 303 { acknowledged.append(token.externalPurchaseId.rawValue) }
            }
            // Taken while the server runs: pg_dump reads one snapshot, so the dump is consistent.
            let dumped = try Self.run("pg_dump", ["--format=custom", "--no-owner", "--file", dump.path, source.url])
            #expect(dumped.status == 0, "\(dumped.errors)")
        }
        let restored = try Self.run("pg_restore", ["--no-owner", "--exit-on-error", "--dbname", target.url, dump.path])
        #expect(restored.status == 0, "\(restored.errors)")
        let live = try LiveApplication { $0.storage.postgresURL = target.url }
        let stored = Set(try live.ledger().tokens.tokens().map(\.token.externalPurchaseId.rawValue))
        #expect(acknowledged.count == 200)
        #expect(Set(acknowledged).subtracting(stored).isEmpty)
        #expect(try live.get("/healthz").status == 200)
    }
}
