import ExternalPurchase
import Storage

/// What Apple's answer to one report means for the outbox: a pure function of the answer, the attempts so far
/// and the time, so every branch is unit-tested without a network.
struct AppleAnswer: Sendable {
    /// What the sending pass does after recording the attempt.
    enum Next: Sendable, Equatable {
        /// Go on with the next due report.
        case continueSending
        /// Stop this pass (Apple asked us to slow down).
        case endPass
        /// Stop sending until the configuration is fixed and the server restarted (401).
        case stopUnauthorized(reason: String)
    }

    var attempt: ReportAttempt
    var next: Next
    /// The log line: level and message. Apple's error body goes with rejections.
    var logLevel: LogLevel
    var message: String

    enum LogLevel: Sendable, Equatable {
        case info
        case warning
        case critical
    }

    static func interpret(
        _ outcome: ExternalPurchaseAPIClient.Outcome,
        attempts: Int64,
        sentAt: Int64,
        backoff: (Int64) -> Int64 = backoffMilliseconds
    ) -> AppleAnswer {
        switch outcome {
        case .accepted:
            return AppleAnswer(
                attempt: ReportAttempt(
                    state: .accepted,
                    httpStatus: 200,
                    response: nil,
                    nextAttemptAt: sentAt,
                    at: sentAt
                ),
                next: .continueSending,
                logLevel: .info,
                message: "report accepted by Apple"
            )
        case .rejected(let body):
            // A 400 is not resent unchanged: the report waits until the token's data changes.
            return AppleAnswer(
                attempt: ReportAttempt(
                    state: .rejected,
                    httpStatus: 400,
                    response: body,
                    nextAttemptAt: sentAt,
                    at: sentAt
                ),
                next: .continueSending,
                logLevel: .warning,
                message: "report rejected by Apple; it waits for corrected data"
            )
        case .unauthorized:
            return AppleAnswer(
                attempt: ReportAttempt(
                    state: .pending,
                    httpStatus: 401,
                    response: "unauthorized",
                    nextAttemptAt: sentAt,
                    at: sentAt
                ),
                next: .stopUnauthorized(
                    reason: "Apple answered 401 to the JWT: check apple.issuerId, apple.keyId and the .p8 key"
                ),
                logLevel: .critical,
                message: "reporting stopped: Apple rejected our credentials"
            )
        case .rateLimited(let retryAt):
            return AppleAnswer(
                attempt: ReportAttempt(
                    state: .pending,
                    httpStatus: 429,
                    response: "rate limited",
                    nextAttemptAt: retryAt ?? sentAt + backoff(attempts),
                    at: sentAt
                ),
                next: .endPass,
                logLevel: .warning,
                message: "Apple rate-limited reporting"
            )
        case .serverError(let status, let body):
            return AppleAnswer(
                attempt: ReportAttempt(
                    state: .pending,
                    httpStatus: Int64(status),
                    response: String(body.prefix(2000)),
                    nextAttemptAt: sentAt + backoff(attempts),
                    at: sentAt
                ),
                next: .continueSending,
                logLevel: .warning,
                message: "report failed; will retry"
            )
        case .networkError(let message):
            return AppleAnswer(
                attempt: ReportAttempt(
                    state: .pending,
                    httpStatus: nil,
                    response: message,
                    nextAttemptAt: sentAt + backoff(attempts),
                    at: sentAt
                ),
                next: .continueSending,
                logLevel: .warning,
                message: "report not delivered; will retry"
            )
        }
    }

    /// Exponential backoff with equal jitter: between half and all of 5 s × 2^attempts, capped at an hour, at
    /// least 1 s. The random half spreads retries of many reports that failed together.
    static func backoffMilliseconds(attempts: Int64) -> Int64 {
        let ceiling = min(3_600_000, 5_000 * (Int64(1) << min(attempts, 20)))
        return max(1_000, Int64.random(in: ceiling / 2...ceiling))
    }
}
