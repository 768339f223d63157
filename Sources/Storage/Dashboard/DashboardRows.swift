public import Domain

/// Tokens first seen on one UTC day, from one environment and one source (`url` or `app`). Days are whole UTC
/// days counted from the epoch (`timestamp / Milliseconds.day`).
public struct DailyTokenCount: Sendable, Equatable {
    /// Days since 1970-01-01 (UTC).
    public var day: Int64
    public var environment: Environment
    public var source: TokenSource
    public var count: Int64

    public init(day: Int64, environment: Environment, source: TokenSource, count: Int64) {
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
