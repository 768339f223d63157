import Domain
import ExternalPurchase
import Foundation
import Storage
import Testing

@testable import LinkOut

/// The planner checks unexpired custom-link tokens for duplicates a window a pass, moving on each pass and
/// starting again after the last; a batch cut at its limit checks the same window again.
@Suite("Duplicate scan of the planner")
struct DuplicateScanPlannerTests {
    static let created: Int64 = 1_706_169_600_000
    static let now = created + Milliseconds.days(30)

    static func record(_ ledger: Ledger, _ id: String, created: Int64, expires: Int64, seen: Int64) throws {
        let token = ExternalPurchaseToken(
            appAppleId: 1_234_567_890,
            bundleId: "com.example",
            tokenCreationDate: created,
            externalPurchaseId: ExternalPurchaseID(id),
            tokenType: "ACQUISITION",
            tokenExpirationDate: expires
        )
        _ = try ledger.tokens.recordForwardedToken(
            TokenFields(token, source: .app),
            checkoutId: "c-\(id)",
            at: seen
        )
    }

    static func planner(_ ledger: Ledger, cursor: DuplicateScanCursor, batchLimit: Int = 100) -> ReportPlanner {
        ReportPlanner(
            ledger: ledger,
            noLineItemAfterSeconds: 172_800,
            batchLimit: batchLimit,
            paymentHold: Milliseconds.day,
            identifiers: ReportIdentifiers(secret: "planner-tests"),
            duplicateCursor: cursor,
            duplicateWindowSize: 3
        )
    }

    static func withLedger(_ body: (Ledger) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-dupscan-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let ledger = try Ledger(directory: folder.path)
        defer { ledger.close() }
        try body(ledger)
    }

    @Test func aDuplicateLastInTheOrderIsPlannedWhenTheWindowReachesIt() throws {
        try Self.withLedger { ledger in
            let created = Self.created
            let year = created + Milliseconds.days(365)
            for index in 0..<8 {
                try Self.record(
                    ledger,
                    "u\(index)",
                    created: created + Int64(index),
                    expires: year,
                    seen: created
                )
            }
            // A refreshed copy: same creation and expiry as "y", seen after it, last in the order.
            try Self.record(ledger, "y", created: created + 100, expires: year, seen: created)
            try Self.record(ledger, "z", created: created + 100, expires: year, seen: created + 1)
            let cursor = DuplicateScanCursor()
            let planner = Self.planner(ledger, cursor: cursor)
            var plans: [[ExternalPurchaseID: ReportStatus]] = []
            for _ in 0..<8 {
                let planned = try planner.plan(now: Self.now)
                plans.append(
                    Dictionary(uniqueKeysWithValues: planned.map { ($0.report.externalPurchaseId, $0.report.status) })
                )
            }
            // Ten custom-link tokens in windows of three: "z" is alone in the fourth, and again after a round.
            let found: [ExternalPurchaseID: ReportStatus] = ["z": .duplicateToken]
            #expect(plans == [[:], [:], [:], found, [:], [:], [:], found])
        }
    }

    @Test func aBatchCutAtItsLimitChecksTheSameWindowAgain() throws {
        try Self.withLedger { ledger in
            let created = Self.created
            let year = created + Milliseconds.days(365)
            // Two expired tokens: due, more than a batch of one.
            for id in ["e1", "e2"] {
                try Self.record(ledger, id, created: created, expires: created + Milliseconds.day, seen: created)
            }
            for index in 0..<5 {
                try Self.record(ledger, "u\(index)", created: created + 1 + Int64(index), expires: year, seen: created)
            }
            let cursor = DuplicateScanCursor()
            #expect(try Self.planner(ledger, cursor: cursor, batchLimit: 1).plan(now: Self.now).count == 1)
            #expect(cursor.current == nil)
            #expect(try Self.planner(ledger, cursor: cursor).plan(now: Self.now).count == 2)
            #expect(cursor.current == CustomLinkKey(createdAt: created + 1, externalPurchaseId: "u0"))
        }
    }
}
