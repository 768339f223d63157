import Foundation
import TestSupport
import Testing

@testable import LinkOut

#if canImport(Glibc)
import Glibc
#endif

/// The database goes away under a running instance and comes back: landings get a quick 503 meanwhile (never a
/// hang), `/readyz` says why, and both recover without a restart. Runs in the PostgreSQL pass of `make test` (it
/// needs `LINKOUT_TEST_POSTGRES_URL`; the SQLite pass skips it by name).
@Suite("PostgreSQL outage")
struct PostgresOutageTests {
    @Test func anOutageGivesQuick503sAndReadyzSaysWhyThenRecovers() throws {
        let database = try #require(
            try TestDatabase.freshDatabase(),
            "LINKOUT_TEST_POSTGRES_URL must name the test server"
        )
        let server = try #require(TestDatabase.postgresURL)
        defer { try? TestDatabase.execute("DROP DATABASE IF EXISTS \(database.name) WITH (FORCE)", on: server) }
        let live = try LiveApplication { $0.storage.postgresURL = database.url }
        defer { live.application.shutdown() }
        #expect(try live.get(Self.landing()).status == 303)
        let keySet = try live.get("/.well-known/jwks.json")
        #expect(keySet.status == 200 && keySet.text.contains("\"kid\""))

        // The outage: every session to the database is cut and new ones are refused, as while it restarts.
        try TestDatabase.execute("ALTER DATABASE \(database.name) WITH ALLOW_CONNECTIONS false", on: server)
        try TestDatabase.execute(
            // With a timeout, the call waits until each session has ended, so no landing can still commit on one.
            "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE datname = '\(database.name)'",
            on: server
        )
        // RawClient gives up after 5 s: a hang fails here instead of passing late.
        let refused = try live.get(Self.landing())
        #expect(refused.status == 503)
        let readiness = try live.get("/readyz")
        #expect(readiness.status == 503)
        #expect(readiness.text.contains("database: unavailable"))
        // Apps still get the key set to verify the entitlements they hold: the one last read.
        let keptKeySet = try live.get("/.well-known/jwks.json")
        #expect(keptKeySet.status == 200 && keptKeySet.text == keySet.text, "\(keptKeySet.status)")

        try TestDatabase.execute("ALTER DATABASE \(database.name) WITH ALLOW_CONNECTIONS true", on: server)
        // Back without a restart: readiness probes the database again, and the next landing is recorded.
        #expect(eventually(within: 30) { (try? live.get("/readyz").status) == 200 })
        let again = try live.get(Self.landing())
        #expect(again.status == 303)
        let checkout = try #require(again.header("Location"))
        #expect(try live.get(checkout).status == 200)
    }

    /// The database's server stalls (its backends frozen, as on a paused host or an I/O stall): it answers
    /// nothing, and its own statement_timeout never fires. A landing is answered within the session's answer
    /// limit (statement_timeout and 2 s) instead of for as long as the stall lasts, and the instance goes on once
    /// the server answers again.
    @Test func aStalledServerHoldsNoLandingPastTheAnswerLimit() throws {
        let database = try #require(
            try TestDatabase.freshDatabase(),
            "LINKOUT_TEST_POSTGRES_URL must name the test server"
        )
        let server = try #require(TestDatabase.postgresURL)
        defer { try? TestDatabase.execute("DROP DATABASE IF EXISTS \(database.name) WITH (FORCE)", on: server) }
        let live = try LiveApplication {
            $0.storage.postgresURL = database.url
            $0.storage.statementTimeoutMilliseconds = 500
        }
        defer { live.application.shutdown() }
        #expect(try live.get(Self.landing()).status == 303)
        // Every session of this instance's database stops answering; the server itself (other tests' databases,
        // new sessions) goes on.
        let frozen = try TestDatabase.values(
            "SELECT pid FROM pg_stat_activity WHERE datname = '\(database.name)'",
            on: server
        ).compactMap { pid_t($0) }
        #expect(!frozen.isEmpty)
        for pid in frozen { #expect(kill(pid, SIGSTOP) == 0, "pid \(pid)") }
        defer { for pid in frozen { kill(pid, SIGCONT) } }
        // RawClient gives up after 5 s: a landing held for the stall fails here. Answered either way: 503 (the
        // session given up), or 303 on a new session.
        let held = try live.get(Self.landing())
        #expect([303, 503].contains(held.status), "\(held.status)")
        #expect(eventually(within: 30) { (try? live.get(Self.landing()).status) == 303 })
    }

    static func landing() -> String {
        PostgresClusterTests.landingTarget(externalPurchaseId: UUID().uuidString.lowercased())
    }
}
