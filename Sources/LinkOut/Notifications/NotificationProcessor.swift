import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Logging
import Storage
import Synchronization

/// Acts on stored notifications (Apple: "subtype"), each exactly once: the action and the `processed_at` mark are one
/// transaction, so a redelivery, a recovered copy, a crash or a second pass never acts twice.
///
/// - `UNREPORTED`, token known: its report is due now. The token is marked (`tokens.report_due_at`), which
///   ends the `NO_LINE_ITEM` wait and any payment hold for it, and a pending report of it is sent at once.
/// - `UNREPORTED`, token unknown: the token is recorded (source `notification`) and reported `UNRECOGNIZED_TOKEN`
///   (Apple's "Reporting unrecognized tokens and tokens without transactions": a token you learn of from a notification
///   and have no record of).
/// - `CREATED`: the custom-link token is recorded with its type and expiry (source `notification`); it is then
///   reported like any other token.
/// - `ACTIVE_TOKEN_REMINDER`: Apple repeats it monthly "unless you report the token as a duplicate". The token is
///   recorded if unknown; the planner reports it `DUPLICATE_TOKEN` when it is an extra token of its customer (once its
///   window of custom-link tokens reaches it, `ReportStore.needingReportsCondition`), and otherwise leaves it alone
///   while it is active: it may still take purchases, and a `NO_LINE_ITEM` now would stand against them (any token
///   active at a transaction's time may carry it; Apple: "Testing transactions that use custom link tokens"). A
///   reminder for a token Apple says has expired makes it due now.
///
/// Each of them carries Apple's own copy of the token, signed. When a landing or a forward recorded the token
/// first (from a token nobody signed) with other values (app, creation date, type, expiry), Apple's replace
/// them, so the report planner works from Apple's dates, and the correction is logged.
final class NotificationProcessor: Sendable {
    let ledger: Ledger
    let identifiers: Identifiers
    let reporting: ReportingService
    let receiver: NotificationReceiver
    let logger: Logger
    let clock: Clock
    private let passLock = Mutex(())

    init(
        ledger: Ledger,
        identifiers: Identifiers,
        reporting: ReportingService,
        receiver: NotificationReceiver,
        logger: Logger,
        clock: Clock
    ) {
        self.ledger = ledger
        self.identifiers = identifiers
        self.reporting = reporting
        self.receiver = receiver
        self.logger = logger
        self.clock = clock
    }

    /// Acts on every stored notification not yet processed, oldest first; returns how many were processed.
    @discardableResult
    func processPending() -> Int {
        passLock.withLock { _ in
            var processed = 0
            do {
                // Visits journaled before now reach the tables first, so a token seen moments ago is known.
                ledger.flush(timeout: .seconds(2))
                for notification in try ledger.notifications.notifications(unprocessedOnly: true, limit: 500) {
                    if process(notification) { processed += 1 }
                }
            } catch {
                logger.error("notifications could not be read", ["error": "\(error)"])
            }
            if processed > 0 { reporting.wake() }
            return processed
        }
    }

    private func process(_ notification: StoredNotification) -> Bool {
        var metadata = NotificationReceiver.metadata(notification)
        do {
            let change = try change(for: notification)
            guard let applied = try ledger.notifications.apply(change) else { return false }
            metadata["outcome"] = applied.outcome.rawValue
            receiver.count(notification.notificationType, notification.subtype, applied.outcome.rawValue)
            logger.info("notification processed", metadata)
            if let warning = change.warning { logger.warning(warning, metadata) }
            if !applied.corrections.isEmpty {
                // The token was first recorded from an unsigned landing or forward that differed from Apple's
                // data: worth a look (a made-up token for a real id). Field values only, never the token.
                var corrected = metadata
                corrected["corrections"] = applied.corrections.map {
                    "\($0.field): \($0.recorded ?? "absent") -> \($0.apple ?? "absent")"
                }.joined(separator: "; ")
                logger.warning("token corrected to Apple's values", corrected)
            }
            return true
        } catch {
            metadata["error"] = "\(error)"
            logger.error("notification not processed; it is tried again", metadata)
            return false
        }
    }

    /// What acting on one notification writes. The payload was verified before it was stored; only its JSON is
    /// read again here.
    func change(for notification: StoredNotification) throws -> NotificationChange {
        let now = clock.nowMilliseconds()
        var change = NotificationChange(notificationUUID: notification.notificationUUID, at: now, outcome: .ignored)
        let payload = try Self.payload(of: notification.signedPayload)
        guard payload.notificationType == .externalPurchaseToken, let token = payload.externalPurchaseToken else {
            return change
        }
        let known = try ledger.tokens.token(token.externalPurchaseId)
        let reports = known == nil ? [] : try ledger.reports.reports(for: token.externalPurchaseId)
        let fields = try Self.fields(token)
        switch payload.subtype {
        case .unreported:
            if known == nil {
                change.token = fields
                change.checkoutId = identifiers.checkoutId(for: token)
                change.reportIfRecorded = try Self.unrecognizedReport(token, now: now)
                change.outcome = .unrecognizedReported
                change.outcomeIfKnown = .dueNow
            } else if reports.contains(where: { $0.state == .accepted }) {
                // Apple's notice crossed our report (or announced a token reported since): nothing is owed. Signed
                // after Apple took the report, it says Apple holds none: nothing is sent again (the report was
                // answered 200, and Apple answers a repeat as a duplicate), but the operator hears of it.
                change.token = fields
                change.outcome = .alreadyReported
                let accepted = reports.filter { $0.state == .accepted }.compactMap(\.acceptedAt).max()
                // Apple's clock and ours differ, and it may decide just before our 200 and sign just after.
                if let accepted, payload.signedDate > accepted + Self.crossingMargin {
                    change.warning =
                        "Apple says the token is unreported, after it accepted its report: check it with Apple "
                        + "(linkout report status; Apple's Retrieve External Purchase Report)"
                }
            } else {
                // Apple's values correct what a landing or forward recorded (the apply compares them).
                change.token = fields
                change.dueNow = token.externalPurchaseId
                change.outcome = .dueNow
            }
        case .created:
            change.token = fields
            change.checkoutId = identifiers.checkoutId(for: token)
            change.outcome = known == nil ? .recorded : .known
        case .activeTokenReminder:
            change.token = fields
            change.checkoutId = identifiers.checkoutId(for: token)
            if reports.isEmpty {
                if ReportingPolicy.isReportedAtExpiry(token), !ReportingPolicy.hasExpired(token, at: now) {
                    change.outcome = known == nil ? .recorded : .known
                } else {
                    change.dueNow = token.externalPurchaseId
                    change.outcome = known == nil ? .recorded : .dueNow
                }
            } else if reports.contains(where: { $0.status == .duplicateToken }) {
                // Apple stops reminding once the duplicate report is in; one may have crossed it.
                change.outcome = .reportedDuplicate
            } else {
                change.outcome = .alreadyReported
            }
        case .unknown, nil:
            break
        }
        return change
    }

    /// How long after Apple took a report an `UNREPORTED` notice can still have crossed it.
    static let crossingMargin: Int64 = 10 * 60_000

    /// The payload part of a stored JWS (verified when it was received).
    static func payload(of signedPayload: String) throws -> NotificationPayload {
        let parts = signedPayload.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = Base64URL.decode(parts[1]) else {
            throw SignedPayloadError(.malformedJWS, "stored notification is not a JWS")
        }
        return try JSONDecoder().decode(NotificationPayload.self, from: Data(bytes))
    }

    /// The token as the ledger records one learned from Apple; its raw form is the Base64URL of the JSON Apple
    /// sent, which is what a token is (Apple: "the Base64URL-decoded JSON of the external purchase token").
    static func fields(_ token: ExternalPurchaseToken) throws -> TokenFields {
        return TokenFields(token, source: .notification)
    }

    /// `UNRECOGNIZED_TOKEN` for a token only Apple told us about, checked against Apple's rules like every
    /// report.
    static func unrecognizedReport(_ token: ExternalPurchaseToken, now: Int64) throws -> StoredReport {
        let report = ExternalPurchaseReport(
            requestIdentifier: RequestIdentifier(ReportPlanner.newIdentifier()),
            externalPurchaseId: token.externalPurchaseId,
            status: .unrecognizedToken
        )
        let problems = ReportValidator(token: token, now: now).problems(in: report)
        guard problems.isEmpty else {
            throw SignedPayloadError(.malformedPayload, problems.map(\.description).joined(separator: "; "))
        }
        return StoredReport(
            requestIdentifier: report.requestIdentifier,
            externalPurchaseId: token.externalPurchaseId,
            environment: token.environment,
            bundleId: token.bundleId,
            status: report.status,
            body: try AppleJSON.text(report),
            nextAttemptAt: now,
            createdAt: now
        )
    }
}
