package import Domain
package import ExternalPurchase
package import Outbound
import Storage

/// What Apple's answer to one report means for the outbox: a pure function of the answer, the attempts so far
/// and the time, so every branch is unit-tested without a network.
package struct AppleAnswer: Sendable {
    /// What the sending pass does after recording the attempt.
    enum Next: Sendable, Equatable {
        /// Go on with the next due report.
        case continueSending
        /// Apple asked us to slow down (429): no report goes out before this moment (UNIX ms).
        case pause(until: Int64)
        /// A 400 after an earlier attempt got no answer: it may be Apple's "duplicate request" for a report it
        /// accepted while its 200 was lost. Retrieve External Purchase Report decides (`settle`).
        case confirmWithRetrieve
        /// Apple refuses us, not the report (401, an undocumented 3xx or 4xx), or the request cannot be signed: hold
        /// sending back and try one report every few minutes until Apple takes one again (`ReportingBlock`).
        /// Reports stay in the outbox.
        case block(ReportingBlock.Reason, detail: String)
    }

    var attempt: ReportAttempt
    var next: Next
    /// What a rejection changes in the report before it goes again (see `AppleRejection`).
    var rewrite: ReportRewrite?
    /// The log line: level and message. Apple's error body goes with rejections.
    var logLevel: LogLevel
    var message: String

    enum LogLevel: Sendable, Equatable {
        case info
        case warning
        case critical
    }

    package static func interpret(
        _ outcome: ExternalPurchaseAPIClient.Outcome,
        attempts: Int64,
        sentAt: Int64,
        backoff: (Int64) -> Int64 = ReportOutbox.backoff.milliseconds
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
            return rejectedAtFirst(body: body, attempts: attempts, sentAt: sentAt)
        case .rateLimited(let retryAt):
            // A `Retry-After` already past (a date of 2015) or none readable: at least `rateLimitPause`, not the
            // report's own backoff (its attempts do not grow on a 429, and a pause of seconds sent twice a second).
            let stated = retryAt.flatMap { $0 > sentAt ? $0 : nil }
            return rateLimited(
                until: stated ?? sentAt + max(backoff(attempts), Self.rateLimitPause),
                sentAt: sentAt
            )
        case .unauthorized, .signingFailed:
            return refused(outcome, sentAt: sentAt)
        // A redirect is as undocumented as a 403: Apple's API answers where it is asked, and a standing 3xx (a
        // wrong URL, a proxy's login page) retried quietly for good never told the operator.
        case .serverError(let status, _) where (300..<500).contains(status):
            return refused(outcome, sentAt: sentAt)
        case .serverError(let status, let body):
            return retry(
                httpStatus: Int64(status),
                response: String(body.prefix(2000)),
                at: sentAt + backoff(attempts),
                sentAt: sentAt,
                message: status == 200
                    ? "a 200 that is not Apple's answer to this report (a proxy, a wrong URL?); will retry"
                    : "report failed; will retry"
            )
        case .networkError(let message):
            return retry(
                httpStatus: nil,
                response: message,
                at: sentAt + backoff(attempts),
                sentAt: sentAt,
                message: "report not delivered; will retry"
            )
        }
    }

    /// What a 400 means is decided from Apple's errors (`rejected(_:body:…)`). After an earlier attempt, or when
    /// the body says so, it may first be Apple's "duplicate request" for a report whose 200 was lost: Retrieve
    /// settles that.
    private static func rejectedAtFirst(body: String, attempts: Int64, sentAt: Int64) -> AppleAnswer {
        AppleAnswer(
            attempt: ReportAttempt(
                state: .rejected,
                httpStatus: 400,
                response: body,
                nextAttemptAt: sentAt,
                at: sentAt
            ),
            next: attempts > 0 || AppleRejection.mayBeDuplicateRequest(body) ? .confirmWithRetrieve : .continueSending,
            logLevel: .warning,
            message: "report rejected by Apple; it waits for corrected data"
        )
    }

    /// The shortest pause after a 429 that names no time still to come.
    static let rateLimitPause: Int64 = 60_000

    /// Apple's limit is on us, not on this report: all sending pauses, and the attempt does not count, so the
    /// report's own backoff does not grow.
    private static func rateLimited(until: Int64, sentAt: Int64) -> AppleAnswer {
        AppleAnswer(
            attempt: ReportAttempt(
                state: .pending,
                httpStatus: 429,
                response: "rate limited",
                nextAttemptAt: until,
                at: sentAt,
                countsAsAttempt: false
            ),
            next: .pause(until: until),
            logLevel: .warning,
            message: "Apple rate-limited reporting; sending pauses"
        )
    }

    /// Apple refuses us, not the report: a 401, a 4xx it does not document for this call (Apple's "Send External
    /// Purchase Report" documents 400, 401 and 429; a 403 or 404 says our picture of the API or the account is wrong),
    /// or a request we cannot sign. Retrying each report cannot fix it, but a probe every few minutes notices when it
    /// is fixed (`ReportingBlock`). The report is kept, and the attempt does not count: probes during a long block must
    /// not use up its retries or grow its backoff.
    private static func refused(_ outcome: ExternalPurchaseAPIClient.Outcome, sentAt: Int64) -> AppleAnswer {
        let (status, response, reason, detail, message): (Int64?, String, ReportingBlock.Reason, String, String)
        switch outcome {
        case .serverError(let code, let body):
            (status, response, reason, message) = (
                Int64(code), String(body.prefix(2000)), .undocumentedAnswer,
                "reporting blocked: Apple gave an undocumented answer"
            )
            detail =
                "Apple answered \(code), which it does not document for sending reports; check "
                + "apple.productionURL, apple.sandboxURL and the account"
        case .signingFailed(let problem):
            (status, response, reason, message) = (
                nil, problem, .signingFailed, "reporting blocked: requests cannot be signed"
            )
            detail =
                "requests cannot be signed (\(problem)): check that apple.privateKeyFile holds the .p8 private key"
        default:
            (status, response, reason, message) = (
                401, "unauthorized", .unauthorized, "reporting blocked: Apple rejected our credentials"
            )
            detail =
                "Apple answered 401 to the JWT: check apple.issuerId, apple.keyId, the .p8 key and the clock"
        }
        return AppleAnswer(
            attempt: ReportAttempt(
                state: .pending,
                httpStatus: status,
                response: response,
                nextAttemptAt: sentAt,
                at: sentAt,
                countsAsAttempt: false
            ),
            next: .block(reason, detail: detail),
            logLevel: .critical,
            message: message
        )
    }

    /// A 5xx or no answer at all: the same report goes again after its backoff.
    private static func retry(
        httpStatus: Int64?,
        response: String,
        at next: Int64,
        sentAt: Int64,
        message: String
    ) -> AppleAnswer {
        AppleAnswer(
            attempt: ReportAttempt(
                state: .pending,
                httpStatus: httpStatus,
                response: response,
                nextAttemptAt: next,
                at: sentAt
            ),
            next: .continueSending,
            logLevel: .warning,
            message: message
        )
    }

    /// A 400 after an earlier attempt, settled with Apple's copy (Retrieve External Purchase Report): Apple
    /// holds a report under this `requestIdentifier` only if it accepted one ("a report that you successfully
    /// submitted"), so a copy means the lost first answer was a 200. A `NotFoundError` (400) confirms the
    /// rejection; no answer leaves the report pending, to be sent and settled again.
    package static func settle(
        _ rejection: AppleAnswer,
        retrieved: Result<(status: Int, body: String), HTTPClientError>,
        requestIdentifier: RequestIdentifier,
        attempts: Int64,
        sentAt: Int64,
        backoff: (Int64) -> Int64 = ReportOutbox.backoff.milliseconds
    ) -> AppleAnswer {
        switch RetrievedReport.read(retrieved, requestIdentifier: requestIdentifier) {
        case .held:
            return AppleAnswer(
                attempt: ReportAttempt(
                    state: .accepted,
                    httpStatus: 200,
                    response: "accepted: Apple holds this report (its first answer was lost)",
                    nextAttemptAt: sentAt,
                    at: sentAt
                ),
                next: .continueSending,
                logLevel: .info,
                message: "report accepted by Apple (settled with Retrieve External Purchase Report)"
            )
        case .notFound:
            var confirmed = rejection
            confirmed.next = .continueSending
            return confirmed
        case .refused(let status):
            return unsettled("Retrieve answered \(status)", rejection, attempts, sentAt, backoff)
        case .rateLimited:
            return unsettled("Retrieve answered 429", rejection, attempts, sentAt, backoff)
        case .unknown(let why):
            return unsettled(why, rejection, attempts, sentAt, backoff)
        }
    }

    private static func unsettled(
        _ why: String,
        _ rejection: AppleAnswer,
        _ attempts: Int64,
        _ sentAt: Int64,
        _ backoff: (Int64) -> Int64
    ) -> AppleAnswer {
        AppleAnswer(
            attempt: ReportAttempt(
                state: .pending,
                httpStatus: 400,
                response: String(
                    ("400 after an earlier attempt; " + why + "; " + (rejection.attempt.response ?? "")).prefix(2000)
                ),
                nextAttemptAt: sentAt + backoff(attempts),
                at: sentAt
            ),
            next: .continueSending,
            logLevel: .warning,
            message: "report answered 400 after an earlier attempt; not settled yet, will retry"
        )
    }

    /// A `400` Apple stands by (Retrieve found nothing under the identifier), acted on as its errors say (Apple:
    /// "SendReportErrorResponse"). A token that needs a person gets one critical log line, here, when its report turns
    /// rejected; it stays rejected (and silent in the log) until its data changes or someone acts.
    static func rejected(
        _ rejection: AppleRejection,
        body: String,
        attempts: Int64,
        sentAt: Int64,
        backoff: (Int64) -> Int64 = ReportOutbox.backoff.milliseconds
    ) -> AppleAnswer {
        var answer = AppleAnswer(
            attempt: ReportAttempt(
                state: .pending,
                httpStatus: 400,
                response: body,
                nextAttemptAt: sentAt,
                at: sentAt
            ),
            next: .continueSending,
            logLevel: .warning,
            message: ""
        )
        switch rejection {
        case .setAside(let items, let rest?):
            answer.rewrite = ReportRewrite(body: try? AppleRejection.encode(rest), setAside: items)
            // The rest cannot be re-encoded only if the stored body was not ours: then a person looks.
            answer.attempt.state = answer.rewrite?.body == nil ? .rejected : .pending
            answer.logLevel = .critical
            answer.message =
                "line items need correction: Apple refused them; they are set aside and the rest of the report "
                + "goes again under the same requestIdentifier"
        case .setAside(let items, nil):
            answer.rewrite = ReportRewrite(setAside: items)
            answer.attempt.state = .rejected
            answer.logLevel = .critical
            answer.message =
                "report needs attention: Apple refused every line item in it; restate or retract them "
                + "(linkout report restate|retract) or report the token NO_LINE_ITEM"
        case .reportNoLineItem(let replacement):
            answer.rewrite = ReportRewrite(
                body: try? AppleRejection.encode(replacement),
                status: .noLineItem
            )
            answer.attempt.state = answer.rewrite?.body == nil ? .rejected : .pending
            answer.message = "Apple refused DUPLICATE_TOKEN for this token's type; it is reported NO_LINE_ITEM"
        case .retryLater:
            answer.attempt.nextAttemptAt = sentAt + backoff(attempts)
            answer.message = "Apple refused a simultaneous submission; the same report goes again later"
        case .needsAttention(let why):
            answer.attempt.state = .rejected
            answer.logLevel = .critical
            answer.message =
                "report needs attention: Apple rejected it (\(why)); resend it, correct its line items or report "
                + "the token NO_LINE_ITEM (linkout report resend|restate|retract|no-line-item)"
        }
        return answer
    }
}
