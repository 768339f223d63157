import Domain
import Foundation
import LedgerSeeding
import TestSupport
import Testing

@testable import Storage

/// What a landing leaves on disk, and the growth benchmark's fill: its rows read as the server's would.
@Suite("Ledger growth")
struct LedgerGrowthTests {
    @Test func aTokensRawTextIsNotKeptBesideItsFields() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try LedgerTests.open(folder)
        defer { ledger.close() }
        _ = try ledger.tokens.recordForwardedToken(LedgerTests.token("a"), checkoutId: "ca", at: 1)
        let raw = try ledger.database.readers.read { connection throws(StorageError) in
            try connection.query("SELECT raw_token FROM tokens").map { $0[0].text }
        }
        #expect(raw == [""])
        #expect(try ledger.tokens.token("a")?.token == LedgerTests.token("a").token)
    }

    @Test func theBenchmarkFillReadsAsReportedLandings() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try LedgerTests.open(folder)
        defer { ledger.close() }
        let start = 100 * Milliseconds.day
        // Two batches, the second continuing the first, as bench/growth.sh grows a ledger.
        try ledger.seedReportedLandings(first: 0, count: 250, start: start, spacing: Milliseconds.hour)
        try ledger.seedReportedLandings(first: 250, count: 50, start: start, spacing: Milliseconds.hour)
        #expect(try ledger.tokens.count(.tokens) == 300)
        #expect(try ledger.reports.reportSummary().counts == [.accepted: 300])
        #expect(try ledger.reports.oldestUnreportedCreation() == nil)
        // 300 hours: 12.5 days from day 100.
        let counts = try ledger.dashboard.dailyTokenCounts(since: 0)
        #expect(counts.count == 13)
        #expect(counts.reduce(0) { $0 + $1.count } == 300)
        #expect(try ledger.dashboard.funnel(since: 0) == Funnel(tokens: 300, checkouts: 0, payments: 0, reported: 300))
        let page = try ledger.tokens.tokens(
            limit: 2,
            after: TokenCursor(after: try #require(try ledger.tokens.token(ExternalPurchaseID(Ledger.seedId(3)))))
        )
        #expect(page.map(\.token.externalPurchaseId.rawValue) == [Ledger.seedId(4), Ledger.seedId(5)])
        #expect(
            try ledger.reports.tokensNeedingReports(
                now: 400 * Milliseconds.day,
                quietSince: 398 * Milliseconds.day,
                paymentsOpenSince: 0,
                paymentsPendingSince: 0,
                holdsEndForTokensCreatedBefore: 0,
                duplicateWindow: try ledger.reports.duplicateWindow(after: nil, size: 10),
                limit: 10
            ).isEmpty
        )
    }
}

@Suite("Token search")
struct TokenSearchTests {
    /// A prefix's matches come in id order, the primary key's, paged by the last id shown: a common prefix
    /// costs a page of rows, not a sort of every match. Without a search the order stays first seen first.
    @Test func aSearchReadsItsMatchesInIdOrderAndPagesByTheLastId() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try Ledger(directory: folder.path)
        defer { ledger.close() }
        // First seen in the reverse of id order, so the two orders differ.
        for (index, id) in ["p-5", "p-4", "q-1", "p-3", "p-2", "p-1"].enumerated() {
            _ = try ledger.tokens.recordForwardedToken(LedgerTests.token(id), checkoutId: "c-\(id)", at: Int64(index))
        }
        let first = try ledger.tokens.tokens(limit: 2, search: "p-")
        #expect(first.map(\.token.externalPurchaseId) == ["p-1", "p-2"])
        let cursor = TokenCursor(after: try #require(first.last))
        let next = try ledger.tokens.tokens(limit: 10, search: "p-", after: cursor)
        #expect(next.map(\.token.externalPurchaseId) == ["p-3", "p-4", "p-5"])
        #expect(try ledger.tokens.tokens(limit: 2).map(\.token.externalPurchaseId) == ["p-5", "p-4"])
        let plan = try QueryPlanTests.plan(
            ledger,
            "SELECT external_purchase_id FROM tokens WHERE external_purchase_id >= ? AND external_purchase_id < ? "
                + "ORDER BY external_purchase_id LIMIT 51",
            [.text("p-"), .text("p-\u{10FFFF}")]
        )
        #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
    }
}
