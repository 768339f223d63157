import Domain
import Foundation
import Storage
import TestSupport
import Testing

@Suite("Ledger dashboard queries")
struct LedgerDashboardTests {
    static let day = Milliseconds.day

    static func token(_ id: String, source: TokenSource = .url) -> TokenFields {
        LedgerTests.token(id, source: source)
    }

    static func report(_ id: String, for token: String) -> StoredReport {
        StoredReport(
            requestIdentifier: RequestIdentifier(id),
            externalPurchaseId: ExternalPurchaseID(token),
            environment: .production,
            bundleId: "com.example",
            status: .noLineItem,
            body: "{}",
            nextAttemptAt: 0,
            createdAt: 1
        )
    }

    @Test func tokensAreCountedPerUTCDayEnvironmentAndSource() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try LedgerTests.open(folder)
        defer { ledger.close() }
        // Day 20_000 from its first to its last millisecond, and the next day's first.
        _ = try ledger.tokens.recordForwardedToken(
            Self.token("a", source: .app),
            checkoutId: "ca",
            at: 20_000 * Self.day
        )
        _ = try ledger.tokens.recordForwardedToken(
            Self.token("b", source: .app),
            checkoutId: "cb",
            at: 20_001 * Self.day - 1
        )
        _ = try ledger.tokens.recordForwardedToken(Self.token("SANDBOX_c"), checkoutId: "cc", at: 20_000 * Self.day + 5)
        _ = try ledger.tokens.recordForwardedToken(
            Self.token("d", source: .app),
            checkoutId: "cd",
            at: 20_001 * Self.day
        )
        _ = try ledger.tokens.recordForwardedToken(
            Self.token("old", source: .app),
            checkoutId: "co",
            at: 19_000 * Self.day
        )
        let counts = try ledger.dashboard.dailyTokenCounts(since: 19_999 * Self.day)
        #expect(
            counts == [
                .init(day: 20_000, environment: .production, source: .app, count: 2),
                .init(day: 20_000, environment: .sandbox, source: .url, count: 1),
                .init(day: 20_001, environment: .production, source: .app, count: 1),
            ]
        )
    }

    @Test func theFunnelCountsTokensThatReachedEachStep() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try LedgerTests.open(folder)
        defer { ledger.close() }
        for id in ["a", "b", "c"] {
            _ = try ledger.tokens.recordForwardedToken(Self.token(id), checkoutId: "c-\(id)", at: 10 * Self.day)
        }
        _ = try ledger.tokens.recordForwardedToken(Self.token("before"), checkoutId: "c-before", at: 1)
        // Two products chosen on one checkout still make one token at the checkout step.
        for product in ["one", "two"] {
            _ = try ledger.tokens.recordCheckoutIntent(
                checkoutId: "c-a",
                productId: ProductID(product),
                currency: "EUR",
                amount: "1.00",
                at: 10 * Self.day
            )
        }
        _ = try ledger.tokens.recordCheckoutIntent(
            checkoutId: "c-b",
            productId: "one",
            currency: "EUR",
            amount: "1",
            at: 1
        )
        try ledger.reports.enqueueReport(Self.report("r-a", for: "a"), lineItemRows: [])
        try ledger.reports.recordAttempt(
            "r-a",
            ReportAttempt(state: .accepted, httpStatus: 200, response: "", nextAttemptAt: 0, at: 10 * Self.day)
        )
        try ledger.reports.enqueueReport(Self.report("r-b", for: "b"), lineItemRows: [])
        #expect(
            try ledger.dashboard.funnel(since: 10 * Self.day)
                == Funnel(tokens: 3, checkouts: 2, payments: 0, reported: 1)
        )
        #expect(try ledger.dashboard.funnel(since: 0).tokens == 4)
    }

    /// A checkout intent recorded while its landing was still only journaled finds no token row; the landing
    /// counts it when it reaches the tables, so the funnel's checkout step is exact whatever the order. SQLite
    /// only: on PostgreSQL a landing is committed before it answers (no journal), so no intent can come first.
    @Test(.enabled(if: TestDatabase.postgresURL == nil))
    func anIntentRecordedBeforeItsLandingReachedTheTablesIsCounted() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try LedgerTests.open(folder)
        defer { ledger.close() }
        _ = try ledger.tokens.recordCheckoutIntent(
            checkoutId: "c-late",
            productId: "one",
            currency: "EUR",
            amount: "1",
            at: 2_000
        )
        _ = try ledger.tokens.recordVisit(LedgerTests.visit("late", checkout: "c-late", at: 1_000))
        _ = try ledger.tokens.recordVisit(LedgerTests.visit("plain", checkout: "c-plain", at: 1_000))
        #expect(try ledger.dashboard.funnel(since: 0) == Funnel(tokens: 2, checkouts: 1, payments: 0, reported: 0))
    }

    @Test func theOldestUnreportedTokenIsTheOldestCreatedWithoutAnAcceptedReport() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try LedgerTests.open(folder)
        defer { ledger.close() }
        #expect(try ledger.reports.oldestUnreportedCreation() == nil)
        for (id, created) in [("reported", Int64(100)), ("waiting", 200), ("newer", 300)] {
            var token = Self.token(id)
            token.token.tokenCreationDate = created
            // Seen in the opposite order to their creation: the age counts from creation.
            _ = try ledger.tokens.recordForwardedToken(token, checkoutId: "c-\(id)", at: 1_000 - created)
        }
        try ledger.reports.enqueueReport(Self.report("r-reported", for: "reported"), lineItemRows: [])
        #expect(try ledger.reports.oldestUnreportedCreation() == 100)
        try ledger.reports.recordAttempt(
            "r-reported",
            ReportAttempt(state: .accepted, httpStatus: 200, response: "", nextAttemptAt: 0, at: 5)
        )
        #expect(try ledger.reports.oldestUnreportedCreation() == 200)
    }

    /// Apple's first notice for an unreported token: 10 days after a token's creation, a custom-link token's at
    /// its expiry, which a year-long token reaches long after tokens created later.
    @Test func theFirstNoticeIsTheCreationPlusTenDaysOrTheExpiry() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try LedgerTests.open(folder)
        defer { ledger.close() }
        let tenDays = ReportingPolicy.unreportedNoticeMilliseconds
        var custom = Self.token("custom-link")
        custom.token.tokenCreationDate = 100
        custom.token.tokenType = "SERVICES"
        custom.token.tokenExpirationDate = 100 + 300 * Milliseconds.day
        _ = try ledger.tokens.recordForwardedToken(custom, checkoutId: "c-custom", at: 1_000)
        #expect(try ledger.reports.reportSummary().firstUnreportedNotice == 100 + 300 * Milliseconds.day)
        #expect(try ledger.reports.reportSummary().oldestUnreportedCreation == 100)
        var plain = Self.token("plain")
        plain.token.tokenCreationDate = 5_000
        _ = try ledger.tokens.recordForwardedToken(plain, checkoutId: "c-plain", at: 1_000)
        #expect(try ledger.reports.reportSummary().firstUnreportedNotice == 5_000 + tenDays)
        // Its report sent and waiting: still unreported, still its notice.
        try ledger.reports.enqueueReport(Self.report("r-plain", for: "plain"), lineItemRows: [])
        #expect(try ledger.reports.reportSummary().firstUnreportedNotice == 5_000 + tenDays)
        try ledger.reports.recordAttempt(
            "r-plain",
            ReportAttempt(state: .accepted, httpStatus: 200, response: "", nextAttemptAt: 0, at: 6_000)
        )
        #expect(try ledger.reports.reportSummary().firstUnreportedNotice == 100 + 300 * Milliseconds.day)
    }

    /// A token from Apple's notification carries whatever creation date it carries: its notice saturates at the
    /// largest integer (PostgreSQL refused the sum, and the dashboard, `/metrics` and `linkout report` with it).
    @Test func aTokenCreatedAtTheLargestDateHasItsNoticeThere() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try LedgerTests.open(folder)
        defer { ledger.close() }
        var extreme = Self.token("extreme")
        extreme.token.tokenCreationDate = .max
        _ = try ledger.tokens.recordForwardedToken(extreme, checkoutId: "c-extreme", at: 1_000)
        try ledger.reports.enqueueReport(Self.report("r-extreme", for: "extreme"), lineItemRows: [])
        #expect(try ledger.reports.reportSummary().firstUnreportedNotice == .max)
        var plain = Self.token("plain")
        plain.token.tokenCreationDate = 5_000
        _ = try ledger.tokens.recordForwardedToken(plain, checkoutId: "c-plain", at: 1_000)
        #expect(
            try ledger.reports.reportSummary().firstUnreportedNotice == 5_000
                + ReportingPolicy.unreportedNoticeMilliseconds
        )
    }

    /// An acceptance recorded again (a late answer to a retried send) keeps the first time: the export's
    /// `acceptedAt` and the close's month never move later than when Apple first took the report.
    @Test func anAcceptanceRecordedTwiceKeepsTheFirstTime() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try LedgerTests.open(folder)
        defer { ledger.close() }
        _ = try ledger.tokens.recordForwardedToken(Self.token("twice"), checkoutId: "c-twice", at: 1)
        try ledger.reports.enqueueReport(Self.report("r-twice", for: "twice"), lineItemRows: [])
        for at in [Int64(5), 9] {
            try ledger.reports.recordAttempt(
                "r-twice",
                ReportAttempt(state: .accepted, httpStatus: 200, response: "", nextAttemptAt: 0, at: at)
            )
        }
        #expect(try ledger.reports.report("r-twice")?.acceptedAt == 5)
    }

    @Test func failingReportsAreRejectedOrRetriedOnes() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try LedgerTests.open(folder)
        defer { ledger.close() }
        for id in ["ok", "rejected", "retrying", "fresh"] {
            _ = try ledger.tokens.recordForwardedToken(Self.token(id), checkoutId: "c-\(id)", at: 1)
            try ledger.reports.enqueueReport(Self.report("r-\(id)", for: id), lineItemRows: [])
        }
        try ledger.reports.recordAttempt(
            "r-ok",
            ReportAttempt(state: .accepted, httpStatus: 200, response: "", nextAttemptAt: 0, at: 5)
        )
        try ledger.reports.recordAttempt(
            "r-rejected",
            ReportAttempt(state: .rejected, httpStatus: 400, response: "{\"errorCode\":4000}", nextAttemptAt: 0, at: 6)
        )
        try ledger.reports.recordAttempt(
            "r-retrying",
            ReportAttempt(state: .pending, httpStatus: 503, response: "busy", nextAttemptAt: 100, at: 7)
        )
        let failing = try ledger.dashboard.failingReports(limit: 10)
        #expect(failing.map(\.requestIdentifier) == ["r-retrying", "r-rejected"])
        #expect(failing.last?.lastResponse == "{\"errorCode\":4000}")
        #expect(try ledger.dashboard.failingReports(limit: 1).count == 1)
    }
}
