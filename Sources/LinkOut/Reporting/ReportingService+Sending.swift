import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Logging
import Outbound
import Storage
import Synchronization

/// Sending: one report to Apple at a time per token, its answer settled and recorded, and what that answer
/// means for every other report (a 401 or 429 pauses them all).
extension ReportingService {
    /// Whether a sender may take another report in a pass at `now`: not stopping, no block of every app, not
    /// paused by a 429 (the outbox's claims leave out the apps blocked on their own).
    func maySend(now: Int64) -> Bool {
        !worker.isStopping && status.sendsAtAll && now >= pausedUntil.load(ordering: .relaxed)
    }

    /// Sends one report, settles and records Apple's answer, and acts on what it means for everyone else.
    /// Returns whether the report left the pending state.
    @discardableResult
    func send(_ report: StoredReport, client: ExternalPurchaseAPIClient) -> Bool {
        let began = clock.nowMilliseconds()
        if let settled = settleDoubt(about: report, client: client, began: began) {
            return record(settled, for: report, outcome: nil, began: began)
        }
        let outcome = client.send(
            body: Array(report.body.utf8),
            requestIdentifier: report.requestIdentifier,
            environment: report.environment,
            bundleId: report.bundleId,
            now: began
        )
        let sentAt = clock.nowMilliseconds()
        heartbeat.store(sentAt, ordering: .relaxed)
        let answer = settle(outcome, of: report, client: client, sentAt: sentAt)
        return record(answer, for: report, outcome: outcome, began: began)
    }

    /// A report that may have gone out from the ledger's lost future (see `RestoreDoubt`): Apple's copy decides
    /// before anything is sent. The answer Apple's copy settles, or nil when the report is to be sent.
    private func settleDoubt(
        about report: StoredReport,
        client: ExternalPurchaseAPIClient,
        began: Int64
    ) -> AppleAnswer? {
        guard RestoreDoubt.applies(to: report, restoredAt: restoredAt, now: began) else { return nil }
        let retrieved = client.retrieve(
            requestIdentifier: report.requestIdentifier,
            environment: report.environment,
            bundleId: report.bundleId,
            now: began
        )
        return RestoreDoubt.settle(report, retrieved: retrieved, at: clock.nowMilliseconds())
    }

    /// What the send's outcome means: an answer that leaves doubt is confirmed with Retrieve, and a 400 Apple
    /// stands by is read for what its errors say (Apple: "SendReportErrorResponse").
    private func settle(
        _ outcome: ExternalPurchaseAPIClient.Outcome,
        of report: StoredReport,
        client: ExternalPurchaseAPIClient,
        sentAt: Int64
    ) -> AppleAnswer {
        var answer = AppleAnswer.interpret(outcome, attempts: report.attempts, sentAt: sentAt)
        if answer.next == .confirmWithRetrieve {
            let retrieved = client.retrieve(
                requestIdentifier: report.requestIdentifier,
                environment: report.environment,
                bundleId: report.bundleId,
                now: clock.nowMilliseconds()
            )
            answer = AppleAnswer.settle(
                answer,
                retrieved: retrieved,
                requestIdentifier: report.requestIdentifier,
                attempts: report.attempts,
                sentAt: clock.nowMilliseconds()
            )
        }
        guard case .rejected(let body) = outcome, answer.attempt.state == .rejected else { return answer }
        return AppleAnswer.rejected(
            AppleRejection.classify(body: body, report: report),
            body: body,
            attempts: report.attempts,
            sentAt: answer.attempt.at
        )
    }

    /// Records Apple's answer to a report (or what Retrieve settled), logs it, and acts on what it means for the
    /// other reports (a block, a pause). `outcome`: the send's, nil when nothing was sent. Returns whether the
    /// report left the pending state.
    private func record(
        _ answer: AppleAnswer,
        for report: StoredReport,
        outcome: ExternalPurchaseAPIClient.Outcome?,
        began: Int64
    ) -> Bool {
        var metadata = Self.metadata(of: answer, for: report, outcome: outcome)
        do {
            try outbox.record(ReportOutbox.Attempt(attempt: answer.attempt, rewrite: answer.rewrite), for: report)
        } catch {
            // The answer is lost with the write; the report stays as it was and is sent again (same bytes, same
            // requestIdentifier), and a duplicate 400 is settled with Retrieve.
            metadata["error"] = "\(error)"
            logger.error("report answer not recorded", metadata)
            return false
        }
        blockAndLog(answer, for: report, metadata: metadata)
        applyToOthers(answer, for: report, outcome: outcome, began: began)
        return answer.attempt.state != .pending
    }

    /// The log line's fields for an answer: the report's ids, never its body; Apple's status and errors.
    private static func metadata(
        of answer: AppleAnswer,
        for report: StoredReport,
        outcome: ExternalPurchaseAPIClient.Outcome?
    ) -> [String: String] {
        var metadata = [
            "external_purchase_id": report.externalPurchaseId.rawValue,
            "request_identifier": report.requestIdentifier.rawValue,
            "report.status": report.status.rawValue,
        ]
        if let status = answer.attempt.httpStatus { metadata["http.status"] = "\(status)" }
        if case .rejected(let body) = outcome { metadata["apple.errors"] = body }
        if case .networkError(let message) = outcome { metadata["error"] = message }
        if case .signingFailed(let message) = outcome { metadata["error"] = message }
        if let rewrite = answer.rewrite, !rewrite.setAside.isEmpty {
            metadata["line_items_set_aside"] = rewrite.setAside.keys.sorted().joined(separator: ",")
        }
        if case .pause(let until) = answer.next { metadata["paused_until"] = ReportingBlock.timestamp(until) }
        return metadata
    }

    /// Starts the block the answer calls for, then logs the answer: one critical line when the block starts, not
    /// one per probe. Apple's refusal blocks the report's app in its environment (the JWT names the app, each
    /// environment has its host); a key that cannot sign blocks every app.
    private func blockAndLog(_ answer: AppleAnswer, for report: StoredReport, metadata: [String: String]) {
        var metadata = metadata
        var (level, message) = (answer.logLevel, answer.message)
        if case .block(let reason, let detail) = answer.next {
            metadata["blocked"] = detail
            let scope = reason == .signingFailed ? nil : report.scope
            if let scope {
                metadata["bundle_id"] = scope.bundleId.rawValue
                metadata["environment"] = scope.environment.rawValue
            }
            if !block(reason, scope: scope, detail: detail, at: answer.attempt.at) {
                (level, message) = (.info, "reporting still blocked: Apple refused this report too")
            }
        }
        switch level {
        case .info: logger.info(message, metadata)
        case .warning: logger.warning(message, metadata)
        case .critical: logger.critical(message, metadata)
        }
    }

    /// What an answer means for the other reports: a pause until Apple says, or the end of a block.
    private func applyToOthers(
        _ answer: AppleAnswer,
        for report: StoredReport,
        outcome: ExternalPurchaseAPIClient.Outcome?,
        began: Int64
    ) {
        if case .pause(let until) = answer.next {
            // Apple's latest word on when to come back is the one that counts.
            pausedUntil.store(until, ordering: .relaxed)
            do {
                try ReportingPause.store(until, in: ledger)
            } catch {
                Self.storageFailed("Apple's pause not recorded in the ledger", error, logger, metrics)
            }
        }
        // Apple read the report (200, or 400 about its content): it took the JWT, so whatever blocked us is over.
        // An answer to a request sent before the block began proves nothing about it.
        if case .accepted = outcome { keyTakenSinceLoaded.store(true, ordering: .relaxed) }
        switch outcome {
        case .accepted, .rejected: unblock(at: answer.attempt.at, ifSentAfter: began, scope: report.scope)
        default: break
        }
    }
}
