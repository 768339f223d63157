import Domain
import ExternalPurchase
import Logging
import Outbound
import Storage

/// After `linkout restore`, the ledger has forgotten what happened since the backup was made: a report it
/// holds as pending, or plans again under the same identifier (`ReportIdentifiers`), may already be at Apple.
/// For `window` after the restore, a send of a report Apple may hold (`applies`: the first since the restore,
/// or one after a try that got no answer) is preceded by Retrieve External Purchase Report: Apple's copy
/// settles it as accepted without a second send; Apple's `NotFoundError` lets it go out; no answer keeps it
/// pending, never sent blind.
enum RestoreDoubt {
    /// The ledger setting `linkout restore` writes: when the backup was restored (UNIX ms).
    static let setting = LedgerBackup.restoredSetting
    /// How long after a restore a first send checks Apple first: the time it takes to send the lost days' events
    /// again (the operator has the provider resend them, README "Backup and restore"; a delivery the provider
    /// never got an answer to comes again by itself, Stripe's for 3 days), with room to spare.
    static let window: Int64 = Milliseconds.days(30)
    /// When a report whose copy Apple could not show is tried again.
    static let retryMilliseconds: Int64 = 5 * Milliseconds.minute

    /// Read once at start, next to the reporting block (whose failed read is the one counted).
    static func restoredAt(_ ledger: Ledger, logger: Logger) -> Int64? {
        do {
            return try ledger.settings.setting(named: setting).flatMap { Int64($0) }
        } catch {
            // Unknown: a report of the lost days may then be sent again under its identifier, and Apple's
            // duplicate 400 is settled with Retrieve as for a lost answer.
            logger.error("restore time could not be read", ["error": "\(error)"])
            return nil
        }
    }

    /// Whether Apple may hold the report without this ledger knowing: it was never sent, or sent only before the
    /// restore (the backup knows nothing of the sends made after it was taken), or its last try since got no
    /// answer (Apple's copy could not be read, or a send's answer was lost: it may have arrived all the same).
    static func applies(to report: StoredReport, restoredAt: Int64?, now: Int64) -> Bool {
        guard let restoredAt, now < restoredAt + window else { return false }
        return report.attempts == 0 || (report.lastAttemptAt ?? 0) < restoredAt || report.lastHTTPStatus == nil
    }

    /// What Retrieve says of a report before its first send: accepted, or nil when it may go out now; an
    /// attempt that keeps it pending when Apple could not tell.
    static func settle(
        _ report: StoredReport,
        retrieved: Result<(status: Int, body: String), HTTPClientError>,
        at now: Int64
    ) -> AppleAnswer? {
        switch RetrievedReport.read(retrieved, requestIdentifier: report.requestIdentifier) {
        case .held:
            return AppleAnswer(
                attempt: ReportAttempt(
                    state: .accepted,
                    httpStatus: 200,
                    response: "accepted: Apple holds this report (sent before the ledger was restored)",
                    nextAttemptAt: now,
                    at: now
                ),
                next: .continueSending,
                logLevel: .info,
                message: "report accepted by Apple before the restore (settled with Retrieve External Purchase Report)"
            )
        case .notFound:
            return nil
        case .refused, .rateLimited:
            // Apple's answer to the send will be the same, and the send's handling (the block, the pause) acts on
            // it; nothing is accepted that Apple already holds, since Apple refuses to read anything now.
            return nil
        case .unknown(let why):
            return unsettled(why, now)
        }
    }

    private static func unsettled(_ why: String, _ now: Int64) -> AppleAnswer {
        AppleAnswer(
            attempt: ReportAttempt(
                state: .pending,
                httpStatus: nil,
                response: "not sent: the ledger was restored and Apple's copy could not be read (\(why))",
                nextAttemptAt: now + retryMilliseconds,
                at: now,
                // Still never sent: the next try checks Apple's copy first again.
                countsAsAttempt: false
            ),
            next: .continueSending,
            logLevel: .warning,
            message: "report held: restored ledger, Apple's copy not read yet"
        )
    }
}
