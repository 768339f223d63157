import Crypto
import Domain
import ExternalPurchase
import Foundation
import Testing

@testable import LinkOut
@testable import Storage

/// Apple's answers mapped to the outbox's next step, without a network.
@Suite struct AppleAnswerTests {
    let sentAt: Int64 = 1_800_000_000_000
    let fixedBackoff: (Int64) -> Int64 = { attempts in 1_000 * (attempts + 1) }

    @Test func acceptedIsFinalAndSendingGoesOn() {
        let answer = AppleAnswer.interpret(.accepted, attempts: 0, sentAt: sentAt, backoff: fixedBackoff)
        #expect(answer.attempt.state == .accepted)
        #expect(answer.attempt.httpStatus == 200)
        #expect(answer.next == .continueSending)
    }

    @Test func rejectedKeepsApplesErrorsAndWaitsForNewData() {
        let body = #"{"errors":[{"name":"IncorrectNetAmountError"}]}"#
        let answer = AppleAnswer.interpret(.rejected(body: body), attempts: 0, sentAt: sentAt, backoff: fixedBackoff)
        #expect(answer.attempt.state == .rejected)
        #expect(answer.attempt.response == body)
        #expect(answer.next == .continueSending)
    }

    @Test func unauthorizedBlocksSendingAndKeepsTheReportPending() {
        let answer = AppleAnswer.interpret(.unauthorized, attempts: 0, sentAt: sentAt, backoff: fixedBackoff)
        #expect(answer.attempt.state == .pending)
        #expect(answer.attempt.httpStatus == 401)
        guard case .block(.unauthorized, let detail) = answer.next else {
            Issue.record("expected a block, got \(answer.next)")
            return
        }
        #expect(detail.contains("apple.keyId"))
        #expect(answer.logLevel == .critical)
    }

    @Test func rateLimitedHonoursRetryAfterElseBacksOffAndEndsThePass() {
        let told = AppleAnswer.interpret(
            .rateLimited(retryAt: sentAt + 42_000),
            attempts: 3,
            sentAt: sentAt,
            backoff: fixedBackoff
        )
        #expect(told.attempt.nextAttemptAt == sentAt + 42_000)
        #expect(told.next == .pause(until: sentAt + 42_000))
        #expect(!told.attempt.countsAsAttempt)
        let untold = AppleAnswer.interpret(
            .rateLimited(retryAt: nil),
            attempts: 3,
            sentAt: sentAt,
            backoff: fixedBackoff
        )
        #expect(untold.attempt.nextAttemptAt == sentAt + AppleAnswer.rateLimitPause)
        #expect(untold.next == .pause(until: sentAt + AppleAnswer.rateLimitPause))
        // A time already past (a date of 2015) is no time to wait for: sent again twice a second, it was.
        let past = AppleAnswer.interpret(
            .rateLimited(retryAt: sentAt - 1_000),
            attempts: 3,
            sentAt: sentAt,
            backoff: fixedBackoff
        )
        #expect(past.next == .pause(until: sentAt + AppleAnswer.rateLimitPause))
    }

    /// A redirect is as undocumented as a 403 (a wrong URL, a proxy's login page): retried quietly for good, it
    /// never told the operator.
    @Test func aRedirectBlocksSendingAsAnUndocumented4xxDoes() {
        for status in [301, 302, 307, 308] {
            let answer = AppleAnswer.interpret(
                .serverError(status: status, body: ""),
                attempts: 0,
                sentAt: sentAt,
                backoff: fixedBackoff
            )
            guard case .block(.undocumentedAnswer, _) = answer.next else {
                Issue.record("\(status) did not block")
                continue
            }
        }
    }

    @Test func undocumented4xxBlocksSendingAndKeepsTheReport() {
        for status in [402, 403, 404, 405, 409, 413, 422] {
            let answer = AppleAnswer.interpret(
                .serverError(status: status, body: "no"),
                attempts: 0,
                sentAt: sentAt,
                backoff: fixedBackoff
            )
            #expect(answer.attempt.state == .pending)
            #expect(answer.attempt.httpStatus == Int64(status))
            guard case .block(.undocumentedAnswer, let detail) = answer.next else {
                Issue.record("\(status): expected a block, got \(answer.next)")
                continue
            }
            #expect(detail.contains("\(status)"))
            #expect(answer.logLevel == .critical)
        }
        let server = AppleAnswer.interpret(.serverError(status: 502, body: ""), attempts: 0, sentAt: sentAt)
        #expect(server.next == .continueSending)
    }

    @Test func aSigningFailureBlocksSending() {
        let answer = AppleAnswer.interpret(.signingFailed("no private key"), attempts: 2, sentAt: sentAt)
        #expect(answer.attempt.state == .pending)
        #expect(!answer.attempt.countsAsAttempt)
        guard case .block(.signingFailed, let detail) = answer.next else {
            Issue.record("expected a block, got \(answer.next)")
            return
        }
        #expect(detail.contains("apple.privateKeyFile"))
    }

    /// A 401 or an undocumented 4xx refuses us, not the report: the block's probes, however many over a long
    /// block, leave the report's attempts (its backoff, its simultaneous-submission tries, Retrieve on a 400 after
    /// an unanswered attempt) as they were. Apple's own failures (5xx) still count.
    @Test func blockingAnswersDoNotUseUpTheReportsRetries() {
        let outcomes: [ExternalPurchaseAPIClient.Outcome] =
            [.unauthorized] + [402, 403, 404, 409, 422].map { .serverError(status: $0, body: "no") }
        for outcome in outcomes {
            let answer = AppleAnswer.interpret(outcome, attempts: 5, sentAt: sentAt, backoff: fixedBackoff)
            #expect(!answer.attempt.countsAsAttempt, "\(outcome)")
            #expect(answer.attempt.nextAttemptAt == sentAt, "\(outcome)")
        }
        let server = AppleAnswer.interpret(.serverError(status: 503, body: ""), attempts: 5, sentAt: sentAt)
        #expect(server.attempt.countsAsAttempt)
    }

    @Test func a400AfterAnEarlierAttemptIsSettledWithRetrieve() {
        let errors = #"{"errors":[{"errorCode":4000023,"errorMessage":"bad","fieldName":"status"}]}"#
        let first = AppleAnswer.interpret(.rejected(body: errors), attempts: 0, sentAt: sentAt)
        #expect(first.next == .continueSending)
        // A 400 without Apple's errors may be its "duplicate request": checked even on a first attempt.
        let bare = AppleAnswer.interpret(.rejected(body: "dup"), attempts: 0, sentAt: sentAt)
        #expect(bare.next == .confirmWithRetrieve)
        let retried = AppleAnswer.interpret(.rejected(body: "dup"), attempts: 1, sentAt: sentAt)
        #expect(retried.next == .confirmWithRetrieve)
        let id = "11111111-2222-3333-4444-555555555555"
        let held = AppleAnswer.settle(
            retried,
            retrieved: .success((200, #"{"report":{"requestIdentifier":"\#(id)"}}"#)),
            requestIdentifier: RequestIdentifier(id),
            attempts: 1,
            sentAt: sentAt
        )
        #expect(held.attempt.state == .accepted)
        // A 200 that only echoes the identifier (a proxy's page for the path) is not Apple's copy.
        for echo in [
            "<html>No route for /externalPurchase/v1/reports/\(id)</html>", #"{"requestIdentifier":"\#(id)"}"#,
        ] {
            let settled = AppleAnswer.settle(
                retried,
                retrieved: .success((200, echo)),
                requestIdentifier: RequestIdentifier(id),
                attempts: 1,
                sentAt: sentAt
            )
            #expect(settled.attempt.state != .accepted, "\(echo)")
        }
        let unknown = AppleAnswer.settle(
            retried,
            retrieved: .success((400, "NotFoundError")),
            requestIdentifier: RequestIdentifier(id),
            attempts: 1,
            sentAt: sentAt
        )
        #expect(unknown.attempt.state == .rejected)
        #expect(unknown.next == .continueSending)
        let silent = AppleAnswer.settle(
            retried,
            retrieved: .success((503, "")),
            requestIdentifier: RequestIdentifier(id),
            attempts: 1,
            sentAt: sentAt,
            backoff: fixedBackoff
        )
        #expect(silent.attempt.state == .pending)
        #expect(silent.attempt.nextAttemptAt == sentAt + 2_000)
        // A 404 without Apple's error body is no answer of Apple's: nothing is concluded, the report stays pending.
        let misrouted = AppleAnswer.settle(
            retried,
            retrieved: .success((404, "Not Found")),
            requestIdentifier: RequestIdentifier(id),
            attempts: 1,
            sentAt: sentAt,
            backoff: fixedBackoff
        )
        #expect(misrouted.attempt.state == .pending)
    }

    @Test func serverAndNetworkErrorsRetryAfterBackoff() {
        let server = AppleAnswer.interpret(
            .serverError(status: 503, body: String(repeating: "x", count: 5000)),
            attempts: 1,
            sentAt: sentAt,
            backoff: fixedBackoff
        )
        #expect(server.attempt.state == .pending)
        #expect(server.attempt.httpStatus == 503)
        #expect(server.attempt.response?.count == 2000)
        #expect(server.attempt.nextAttemptAt == sentAt + 2_000)
        #expect(server.next == .continueSending)
        let network = AppleAnswer.interpret(
            .networkError("timed out"),
            attempts: 0,
            sentAt: sentAt,
            backoff: fixedBackoff
        )
        #expect(network.attempt.httpStatus == nil)
        #expect(network.attempt.nextAttemptAt == sentAt + 1_000)
    }

    @Test func backoffGrowsWithEqualJitterAndIsCapped() {
        for attempts: Int64 in [0, 1, 5, 30] {
            let ceiling = min(3_600_000, 5_000 * (Int64(1) << min(attempts, 20)))
            for _ in 0..<50 {
                let delay = Backoff.jittered.milliseconds(attempts: attempts)
                #expect(delay >= max(1_000, ceiling / 2) && delay <= ceiling)
            }
        }
    }

    /// Only `DuplicateTokenStatusNotAllowedError` turns a `DUPLICATE_TOKEN` report into `NO_LINE_ITEM`; another
    /// error on `status` (a status regression) needs a person.
    @Test func onlyDuplicateTokenNotAllowedTurnsADuplicateTokenReportIntoNoLineItem() throws {
        let duplicate = try WebhookSignatureTests.stored(
            ExternalPurchaseReport(
                requestIdentifier: RequestIdentifier(UUID().uuidString.lowercased()),
                externalPurchaseId: "t",
                status: .duplicateToken
            )
        )
        let regression = WebhookSignatureTests.body([FakeAppleServer.AppleError.statusRegression])
        guard case .needsAttention(let message) = AppleRejection.classify(body: regression, report: duplicate) else {
            Issue.record("a status regression on a DUPLICATE_TOKEN report must reach a person")
            return
        }
        #expect(message.contains("LineItemStatusRegressionError"))
        let notAllowed = WebhookSignatureTests.body([FakeAppleServer.AppleError.duplicateTokenNotAllowed])
        guard case .reportNoLineItem = AppleRejection.classify(body: notAllowed, report: duplicate) else {
            Issue.record("expected NO_LINE_ITEM")
            return
        }
        // Apple's message text is not published: the same refusal in other words, without the error's name, turns
        // into NO_LINE_ITEM; a status regression that names DUPLICATE_TOKEN still reaches a person.
        for (message, turns) in [
            ("DUPLICATE_TOKEN status is not allowed for this token type.", true),
            ("The status isn't allowed for a token of this type.", true),
            ("status regression: DUPLICATE_TOKEN is not allowed after LINE_ITEM", false),
            ("DUPLICATE_TOKEN is not allowed after LINE_ITEM", false),
        ] {
            let body = WebhookSignatureTests.body([
                .init(errorCode: 4_000_400, errorMessage: message, fieldName: "status")
            ])
            let rejection = AppleRejection.classify(body: body, report: duplicate)
            if case .reportNoLineItem = rejection {
                #expect(turns, "\(message)")
            } else {
                #expect(!turns, "\(message)")
            }
        }
    }
}

/// The entitlement webhook signature, checked against openssl
/// (`printf '1700000000.{"id":"evt_1"}' | openssl dgst -sha256 -hmac s3cret`).
@Suite struct WebhookSignatureTests {
    @Test func matchesOpenSSL() {
        let header = TimestampedHMAC.linkout(secret: "s3cret").header(
            body: Array(#"{"id":"evt_1"}"#.utf8),
            timestamp: 1_700_000_000
        )
        #expect(header == "t=1700000000,v1=8e6f5c9e12ccd802130a0cf337c2d90395d59605481627c32bb6c530172adf23")
    }

    @Test func backoffDoublesFromFiveSecondsToAnHour() {
        #expect(Backoff.exact.milliseconds(attempts: 0) == 5_000)
        #expect(Backoff.exact.milliseconds(attempts: 3) == 40_000)
        #expect(Backoff.exact.milliseconds(attempts: 30) == 3_600_000)
    }

    // MARK: Apple's rejections (SendReportErrorResponse)

    /// NO_LINE_ITEM is offered only while Apple holds no line item of the token: after that Apple refuses it as a
    /// status regression, and `report no-line-item` would too.
    @Test func theResolutionOffersNoLineItemOnlyWhileAppleHoldsNoLineItems() throws {
        let rejected = try Self.stored(
            ExternalPurchaseReport(
                requestIdentifier: "5a2c8f2e-8f2b-4a51-9c3e-0b8d3c1f2a77",
                externalPurchaseId: "t",
                status: .lineItem
            )
        )
        let setAside = StoredLineItem(
            rowId: 1,
            externalPurchaseId: "t",
            lineItemId: "li1",
            body: "{}",
            receivedAt: 1,
            correction: "IncorrectNetAmountError"
        )
        for holds in [false, true] {
            let entry = AttentionEntry(
                externalPurchaseId: "t",
                tokenCreationDate: 0,
                tokenExpirationDate: nil,
                report: rejected,
                lineItems: [setAside],
                appleHoldsLineItems: holds
            )
            #expect(entry.resolution.contains("linkout report restate t li1"))
            #expect(entry.resolution.contains("no-line-item") == !holds, "\(entry.resolution)")
            // A retraction where Apple holds the item withdraws the sale: said, so a refused restatement is not
            // dropped that way by mistake.
            #expect(
                entry.resolution.contains("a retraction withdraws that too, its net then 0") == holds,
                "\(entry.resolution)"
            )
            var bare = entry
            (bare.report, bare.lineItems) = (nil, [])
            #expect(bare.resolution.contains("no-line-item") == !holds, "\(bare.resolution)")
            #expect(bare.resolution.contains("linkout report resend t"))
        }
        // A token from Apple's notification carries whatever dates it carries: its notice saturates, never traps
        // (one created at Int64.max stopped the server at every dashboard load once its report was refused).
        let extreme = AttentionEntry(
            externalPurchaseId: "t",
            tokenCreationDate: .max,
            tokenExpirationDate: nil,
            report: rejected,
            lineItems: [],
            appleHoldsLineItems: false
        )
        #expect(extreme.noticeAt == .max)
    }

    static func stored(_ report: ExternalPurchaseReport, attempts: Int64 = 0) throws -> StoredReport {
        StoredReport(
            requestIdentifier: report.requestIdentifier,
            externalPurchaseId: report.externalPurchaseId,
            environment: .production,
            bundleId: "com.example",
            status: report.status,
            body: try AppleRejection.encode(report),
            attempts: attempts,
            nextAttemptAt: 0,
            createdAt: 0
        )
    }

    static func body(_ errors: [SendReportErrorResponse.Failure]) -> String {
        let encoded = try? JSONEncoder().encode(SendReportErrorResponse(errors: errors))
        return encoded.map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    @Test func rejectionsAreClassifiedByWhatTheirErrorsName() throws {
        let buy = try JSONDecoder().decode(
            LineItem.self,
            from: Data(ReportingHarness.buyJSON(lineItemId: "a").utf8)
        )
        var other = buy
        if case .oneTimeBuy(var item) = other {
            item.lineItemId = "b"
            other = .oneTimeBuy(item)
        }
        let report = ExternalPurchaseReport(
            requestIdentifier: "11111111-2222-3333-4444-555555555555",
            externalPurchaseId: "t",
            status: .lineItem,
            lineItems: [buy, other]
        )
        let stored = try Self.stored(report)
        let named = AppleRejection.classify(
            body: Self.body([
                .init(errorCode: 1, errorMessage: "IncorrectNetAmountError", fieldName: "x", lineItemId: "a")
            ]),
            report: stored
        )
        guard case .setAside(let items, let rest?) = named else {
            Issue.record("expected a set-aside, got \(named)")
            return
        }
        #expect(Array(items.keys) == ["a"])
        #expect(rest.lineItems?.map(\.common.lineItemId) == ["b"])
        #expect(rest.requestIdentifier == report.requestIdentifier)
        // A line item the report does not carry, or an error without one, is for a person.
        let elsewhere = AppleRejection.classify(
            body: Self.body([.init(errorCode: 1, errorMessage: "NotFoundError", fieldName: "x", lineItemId: "z")]),
            report: stored
        )
        #expect(elsewhere == .needsAttention("NotFoundError (field x) (line item z) [1]"))
        let simultaneous = Self.body([.init(errorCode: 2, errorMessage: "SimultaneousSubmissionError")])
        #expect(AppleRejection.classify(body: simultaneous, report: stored) == .retryLater)
        // An empty field name or line item names nothing: the same answer.
        let blank = Self.body([
            .init(errorCode: 2, errorMessage: "SimultaneousSubmissionError", fieldName: "", lineItemId: " ")
        ])
        #expect(AppleRejection.classify(body: blank, report: stored) == .retryLater)
        let tired = try Self.stored(report, attempts: AppleRejection.simultaneousRetries - 1)
        guard case .needsAttention = AppleRejection.classify(body: simultaneous, report: tired) else {
            Issue.record("a simultaneous submission refused again and again must reach a person")
            return
        }
        let duplicate = try Self.stored(
            ExternalPurchaseReport(
                requestIdentifier: report.requestIdentifier,
                externalPurchaseId: "t",
                status: .duplicateToken
            )
        )
        let refused = Self.body([
            .init(errorCode: 3, errorMessage: "DuplicateTokenStatusNotAllowedError", fieldName: "status")
        ])
        guard case .reportNoLineItem(let replacement) = AppleRejection.classify(body: refused, report: duplicate) else {
            Issue.record("expected NO_LINE_ITEM")
            return
        }
        #expect(replacement.status == .noLineItem)
        #expect(replacement.requestIdentifier == report.requestIdentifier)
        #expect(
            AppleRejection.mayBeDuplicateRequest(
                Self.body([.init(errorMessage: "Duplicate request", fieldName: "requestIdentifier")])
            )
        )
        #expect(!AppleRejection.mayBeDuplicateRequest(refused))
    }
}
