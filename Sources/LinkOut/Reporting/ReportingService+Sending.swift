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
    /// Whether a sender may take another report in a pass at `now`: running, not stopping, not paused by a 429.
    func maySend(now: Int64) -> Bool {
        !worker.isStopping && status == .running && now >= pausedUntil.load(ordering: .relaxed)
    }

    /// Sends one report, settles and records Apple's answer, and acts on what it means for everyone else.
    /// Returns whether the report left the pending state.
    @discardableResult
    func send(_ report: StoredReport, client: ExternalPurchaseAPIClient) -> Bool {
        let environment = report.environment
        let began = clock.nowMilliseconds()
        if RestoreDoubt.applies(to: report, restoredAt: restoredAt, now: began) {
            // It may have gone out from the ledger's lost future: Apple's copy decides before anything is sent.
            let retrieved = client.retrieve(
                requestIdentifier: report.requestIdentifier,
                environment: environment,
                bundleId: report.bundleId,
                now: began
            )
            if let settled = RestoreDoubt.settle(report, retrieved: retrieved, at: clock.nowMilliseconds()) {
                return record(settled, for: report, outcome: nil, began: began)
            }
        }
        let outcome = client.send(
            body: Array(report.body.utf8),
            environment: environment,
            bundleId: report.bundleId,
            now: began
        )
        let sentAt = clock.nowMilliseconds()
        heartbeat.store(sentAt, ordering: .relaxed)
        var answer = AppleAnswer.interpret(outcome, attempts: report.attempts, sentAt: sentAt)
        if answer.next == .confirmWithRetrieve {
            let retrieved = client.retrieve(
                requestIdentifier: report.requestIdentifier,
                environment: environment,
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
        if case .rejected(let body) = outcome, answer.attempt.state == .rejected {
            // Apple stands by its 400: act on what its errors say (Apple: "SendReportErrorResponse").
            answer = AppleAnswer.rejected(
                AppleRejection.classify(body: body, report: report),
                body: body,
                attempts: report.attempts,
                sentAt: answer.attempt.at
            )
        }
        return record(answer, for: report, outcome: outcome, began: began)
    }

    /// Records Apple's answer to a report (or what Retrieve settled), logs it, and acts on what it means for the
    /// other reports (a block, a pause). `outcome`: the send's, nil when nothing was sent. Returns whether the
    /// report left the pending state.
    fileprivate func record(
        _ answer: AppleAnswer,
        for report: StoredReport,
        outcome: ExternalPurchaseAPIClient.Outcome?,
        began: Int64
    ) -> Bool {
        let sentAt = answer.attempt.at
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
        do {
            try outbox.record(ReportOutbox.Attempt(attempt: answer.attempt, rewrite: answer.rewrite), for: report)
        } catch {
            // The answer is lost with the write; the report stays as it was and is sent again (same bytes, same
            // requestIdentifier), and a duplicate 400 is settled with Retrieve.
            metadata["error"] = "\(error)"
            logger.error("report answer not recorded", metadata)
            return false
        }
        var (level, message) = (answer.logLevel, answer.message)
        if case .block(let reason, let detail) = answer.next {
            metadata["blocked"] = detail
            // One critical line when the block starts, not one per probe.
            if !block(reason, detail: detail, at: sentAt) {
                (level, message) = (.info, "reporting still blocked: the probe report was refused too")
            }
        }
        switch level {
        case .info: logger.info(message, metadata)
        case .warning: logger.warning(message, metadata)
        case .critical: logger.critical(message, metadata)
        }
        if case .pause(let until) = answer.next {
            // Apple's latest word on when to come back is the one that counts.
            pausedUntil.store(until, ordering: .relaxed)
        }
        // Apple read the report (200, or 400 about its content): it took the JWT, so whatever blocked us is over.
        // An answer to a request sent before the block began proves nothing about it.
        switch outcome {
        case .accepted, .rejected: unblock(at: sentAt, ifSentAfter: began)
        default: break
        }
        return answer.attempt.state != .pending
    }
}
