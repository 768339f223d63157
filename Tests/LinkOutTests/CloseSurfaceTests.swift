import Domain
import Foundation
import Lifecycle
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// `linkout close` and `GET /admin/close` as an operator uses them: the exit code says whether the month is
/// closed, a bad month is a clear usage error or `400`. The ledger keeps no raw token to leak.
@Suite("Close surfaces")
struct CloseSurfaceTests {
    static let admin = ["Authorization": "Bearer admin-secret"]

    func run(_ arguments: [String], environment: [String: String] = [:]) throws -> (
        code: Int32, out: String, err: String
    ) {
        let process = try LinkOutProcess(arguments, directory: LiveApplication.repositoryRoot, environment: environment)
        let code = process.waitForExit()
        return (code, process.stdoutText(), process.stderrText())
    }

    static func visit(_ id: String, created: Int64) -> Visit {
        Visit(
            token: TokenFields(
                ExternalPurchaseToken(
                    appAppleId: 1_234_567_890,
                    bundleId: "com.example",
                    tokenCreationDate: created,
                    externalPurchaseId: ExternalPurchaseID(id)
                ),
                source: .url
            ),
            checkoutId: "c-\(id)",
            bundleId: "com.example",
            landingPath: "/",
            utm: [:],
            at: created
        )
    }

    @Test func theCommandExitsZeroOnlyForAClosedMonth() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-close-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = Configuration()
        configuration.storage.dataDir = directory.path
        configuration.storage.durability = "normal"
        let postgres = try TestDatabase.postgresURL(for: directory.path)
        configuration.storage.postgresURL = postgres
        let environment = postgres.map { ["LINKOUT_DATABASE_URL": $0] } ?? [:]
        let now = Clock.system.nowMilliseconds()
        let january = try #require(CloseMonth(parsing: "2025-01"))
        let previous = CloseMonth(containing: now).previous
        do {
            let ledger = try configuration.storage.openLedger()
            defer { ledger.close() }
            _ = try ledger.tokens.recordVisit(
                Self.visit("close-cli-old", created: january.start + Milliseconds.days(9))
            )
            _ = try ledger.tokens.recordVisit(Self.visit("close-cli-last", created: previous.start + 1000))
        }
        let flags = ["--data-dir", directory.path]

        let late = try run(["close", "--month", "2025-01", "--format", "json"] + flags, environment: environment)
        #expect(late.code == 5)
        #expect(late.out.contains("\"state\" : \"late\""))
        #expect(late.out.contains("close-cli-old"))
        let closing = try run(["close", "--month", previous.description] + flags, environment: environment)
        #expect(closing.code == (now < previous.deadline(day: 15) ? 4 : 5))
        #expect(closing.out.contains("close of \(previous) (production, UTC)"))
        #expect(closing.out.contains("- token close-cli-last"))
        let closed = try run(["close", "--month", "2025-02", "--format", "csv"] + flags, environment: environment)
        #expect(closed.code == 0)
        #expect(closed.out == "month,kind,externalPurchaseId,lineItemId,date,state,reason,action\r\n")
        #expect(try run(["close", "--month", "9998-12"] + flags, environment: environment).code == 3)
        // A month whose deadline would need a five-digit year is no month a close can name.
        #expect(try run(["close", "--month", "9999-12"] + flags, environment: environment).code == 64)

        let missing = try run(["close"] + flags)
        #expect(missing.code == 64)
        #expect(missing.err.contains("--month YYYY-MM is required"))
        let malformed = try run(["close", "--month", "2025-13"] + flags)
        #expect(malformed.code == 64)
        #expect(malformed.err.contains("found '2025-13'"))
        #expect(try run(["close", "--month", "2025-01", "--format", "xml"] + flags).code == 64)
        #expect(try run(["close", "--month", "2025-01", "--bogus"] + flags).code == 64)
    }

    @Test func theAdminRouteAnswersTheReportAndRefusesABadMonth() throws {
        let live = try LiveApplication { $0.adminToken = "admin-secret" }
        let now = Clock.system.nowMilliseconds()
        let month = CloseMonth(containing: now)
        try live.recordAppToken("close-admin", now: now)

        #expect(try live.get("/admin/close?month=\(month)").status == 401)
        for bad in ["", "?month=", "?month=2026-13", "?month=2026-1", "?month=2026-11&environment=test"] {
            let refused = try live.get("/admin/close" + bad, headers: Self.admin)
            #expect(refused.status == 400, "\(bad)")
            #expect(String(decoding: refused.body, as: UTF8.self).contains("\"code\""))
        }
        #expect(
            String(decoding: try live.get("/admin/close", headers: Self.admin).body, as: UTF8.self)
                .contains("invalid_month")
        )
        #expect(try live.get("/admin/close?month=2026-11&format=xml", headers: Self.admin).status == 400)
        #expect(try live.get("/admin/close?month=2026-11&limit=0", headers: Self.admin).status == 400)

        let answer = try live.get("/admin/close?month=\(month)", headers: Self.admin)
        #expect(answer.status == 200)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any])
        #expect(report["state"] as? String == "open")
        #expect(report["month"] as? String == month.description)
        #expect((report["tokens"] as? [String: Any])?["total"] as? Int == 1)
        let csv = try live.get("/admin/close?month=\(month)&format=csv", headers: Self.admin)
        #expect(csv.status == 200)
        #expect(csv.headers.contains { $0.name.lowercased() == "content-type" && $0.value.hasPrefix("text/csv") })
        #expect(String(decoding: csv.body, as: UTF8.self).contains("close-admin"))
        #expect(try live.get("/readyz").status == 200)
    }
}
