/// What the operator dashboard shows: tokens per day, the funnel from landing to report, and what is failing.
/// Days are whole UTC days counted from the epoch (`timestamp / 86_400_000`), so the engines bucket with integer
/// division and no date functions, which differ between SQLite and PostgreSQL.
extension Ledger {
    /// Milliseconds in a UTC day.
    public static let dayMilliseconds: Int64 = 86_400_000

    /// Tokens first seen on one UTC day, from one environment and one source (`url` or `app`).
    public struct DailyTokenCount: Sendable, Equatable {
        /// Days since 1970-01-01 (UTC).
        public var day: Int64
        public var environment: String
        public var source: String
        public var count: Int64

        public init(day: Int64, environment: String, source: String, count: Int64) {
            self.day = day
            self.environment = environment
            self.source = source
            self.count = count
        }
    }

    /// Of the tokens first seen since a time: how many got as far as each step.
    public struct Funnel: Sendable, Equatable {
        /// Tokens recorded (a landing visit or a token the app forwarded).
        public var tokens: Int64
        /// Tokens whose checkout had a product chosen.
        public var checkouts: Int64
        /// Tokens with a completed payment (a purchase).
        public var payments: Int64
        /// Tokens with a report Apple accepted.
        public var reported: Int64

        public init(tokens: Int64, checkouts: Int64, payments: Int64, reported: Int64) {
            self.tokens = tokens
            self.checkouts = checkouts
            self.payments = payments
            self.reported = reported
        }
    }

    /// Tokens first seen at or after `since`, counted per day, environment and source; days without tokens are
    /// left out.
    public func dailyTokenCounts(since: Int64) throws(StorageError) -> [DailyTokenCount] {
        try engine.dailyTokenCounts(since: since)
    }

    /// The funnel of the tokens first seen at or after `since`.
    public func funnel(since: Int64) throws(StorageError) -> Funnel {
        try engine.funnel(since: since)
    }

    /// The `tokenCreationDate` of the oldest token without an accepted report: Apple's UNREPORTED notice counts
    /// from creation, not from when linkout first saw the token.
    public func oldestUnreportedCreation() throws(StorageError) -> Int64? {
        try reportSummary().oldestUnreportedCreation
    }

    /// Reports Apple refused, or that failed at least once and wait for a retry; most recent attempt first.
    public func failingReports(limit: Int) throws(StorageError) -> [StoredReport] {
        try engine.failingReports(limit: limit)
    }

    /// Webhook deliveries given up on, or that failed at least once and wait for a retry; most recent first.
    public func failingWebhooks(limit: Int) throws(StorageError) -> [WebhookDelivery] {
        try engine.failingWebhooks(limit: limit)
    }
}
