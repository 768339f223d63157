import Dispatch
import Domain
import ExternalPurchase
import Foundation
import Lifecycle
package import Logging
import Outbound
package import Storage
import Synchronization

/// App Store Server Notifications V2 for external purchase tokens (Apple: "App Store Server Notifications V2",
/// "externalPurchaseToken"): receiving (the route and recovery share `NotificationReceiver`), acting
/// (`NotificationProcessor`), and recovery through Get Notification History, run by hand
/// (`linkout notifications recover`) and once a day in the background.
package final class AppStoreNotifications: BackgroundService {
    /// A recovery run: what came back from Apple and what became of it.
    package struct RecoverySummary: Sendable, Equatable, CustomStringConvertible {
        package var fetched = 0
        package var stored = 0
        package var duplicates = 0
        package var refused = 0
        package var processed = 0
        /// Pages fetched in this run.
        package var pages = 0
        /// Apps and environments that went on from a page stored by an earlier, failed run of the same window.
        package var resumed = 0
        /// One line per app and environment whose history could not be read completely.
        package var failures: [String] = []

        package var description: String {
            "fetched \(fetched) in \(pages) page(s), new \(stored), already stored \(duplicates), refused \(refused), "
                + "processed \(processed)" + (resumed > 0 ? ", resumed \(resumed) from a stored page" : "")
                + (failures.isEmpty ? "" : "; failed: " + failures.joined(separator: "; "))
        }
    }

    /// The ledger setting holding the end (UNIX ms) of the last complete background history pass.
    static let lastHistoryPassSetting = "last_history_pass"
    /// How often the background pass asks Apple for history.
    static let historyPassInterval: Int64 = Milliseconds.day
    /// Each pass reaches this far behind the previous one, so a notification signed while the last pass ran
    /// is not missed; duplicates are dropped by `notificationUUID`.
    static let historyOverlap: Int64 = Milliseconds.hour
    /// Apple keeps history for 180 days and refuses older start dates; an hour's margin for clock skew.
    static let historyReach: Int64 = Milliseconds.days(180) - Milliseconds.hour

    let receiver: NotificationReceiver
    let processor: NotificationProcessor
    private let keys: RotatingCredentials
    private let historyHTTP: HTTPClient
    private let apple: Configuration.Apple
    let bundleIds: [BundleID]
    let ledger: Ledger
    let logger: Logger
    let clock: Clock
    /// A sweep this often (`reporting.pollIntervalSeconds`).
    private let intervalMilliseconds: Int64
    private let worker: PeriodicWorker
    /// After a pass that failed (Apple's 429 or 5xx, no network), when the next may start and how many failed
    /// in a row: a failed pass is tried again after a minute, doubling to an hour, never on every sweep.
    private let historyRetry = Mutex<(at: Int64, failures: Int)>((0, 0))
    static let historyRetryLongest: Int64 = Milliseconds.hour

    init(
        configuration: Configuration,
        ledger: Ledger,
        identifiers: Identifiers,
        reporting: ReportingService,
        metrics: Metrics,
        logger: Logger,
        clock: Clock
    ) throws(ConfigurationError) {
        receiver = NotificationReceiver(
            verifier: try Self.verifier(configuration.apple),
            apps: Dictionary(configuration.apps.map { ($0.bundleId, $0.appAppleId) }) { first, _ in first },
            ledger: ledger,
            metrics: metrics,
            logger: logger,
            clock: clock
        )
        processor = NotificationProcessor(
            ledger: ledger,
            identifiers: identifiers,
            reporting: reporting,
            receiver: receiver,
            logger: logger,
            clock: clock
        )
        bundleIds = configuration.apps.map(\.bundleId)
        // Get Notification History takes the same In-App Purchase key as reporting (Apple: "Creating API keys to
        // authorize API requests", "Get Notification History"), on the same hosts, and the same key file: a rotated key
        // reaches both.
        var http = HTTPClient.Configuration()
        http.totalTimeout = .seconds(configuration.reporting.requestTimeoutSeconds)
        http.caFile = configuration.apple.caFile
        http.proxy = configuration.apple.proxy
        historyHTTP = HTTPClient(configuration: http)
        keys = reporting.keys
        apple = configuration.apple
        self.ledger = ledger
        self.logger = logger
        self.clock = clock
        intervalMilliseconds = configuration.reporting.pollIntervalSeconds * 1000
        worker = PeriodicWorker(clock: clock)
        for reason in SignedPayloadError.Reason.allCases.map(\.rawValue) + NotificationReceiver.appReasons {
            metrics.increment("linkout_notifications_refused_total", [("reason", reason)], by: 0)
        }
    }

    /// For the command line: the same parts as the server's, without a running reporting service (reports it
    /// queues are sent by the server's next pass).
    package convenience init(configuration: Configuration, ledger: Ledger, logger: Logger) throws {
        try self.init(
            configuration: configuration,
            ledger: ledger,
            identifiers: Identifiers(secret: try ledger.settings.secret(named: "identifiers")),
            reporting: ReportingService(configuration: configuration, ledger: ledger, logger: logger),
            metrics: Metrics(),
            logger: logger,
            clock: .system
        )
    }

    /// The verifier with the configured roots: Apple Root CA - G3 unless `apple.notificationRootCertificates`
    /// names PEM files.
    static func verifier(_ apple: Configuration.Apple) throws(ConfigurationError) -> SignedPayloadVerifier {
        let field = "apple.notificationRootCertificates"
        var pems: [String] = []
        for path in apple.notificationRootCertificates {
            let data = try ConfigurationFile.read(path, limit: ConfigurationFile.textLimit, field: field)
            pems.append(String(decoding: data, as: UTF8.self))
        }
        do {
            return try SignedPayloadVerifier(trustedRootPEMs: pems.isEmpty ? AppleRootCertificates.defaultPEMs : pems)
        } catch {
            throw ConfigurationError(field: field, problem: "holds no PEM certificate: \(error)")
        }
    }

    /// A delivered notification: judged and stored, then acted on at once from storage (a failure there is
    /// retried by the background sweep; the notification is safe).
    func receive(_ signedPayload: String) throws(StorageError) -> NotificationReceiver.Receipt {
        let receipt = try receiver.receive(signedPayload, source: .delivery)
        if case .stored = receipt { processor.processPending() }
        return receipt
    }

    /// The daily pass: from the end of the last complete pass (less an overlap) to now. A fresh ledger starts
    /// its clock now; older history is `linkout notifications recover --since`.
    func historyPassIfDue(now: Int64) {
        guard history != nil else { return }
        do {
            guard let text = try ledger.settings.setting(named: Self.lastHistoryPassSetting), let last = Int64(text)
            else {
                try ledger.settings.setSetting(named: Self.lastHistoryPassSetting, to: String(now))
                return
            }
            guard now - last >= Self.historyPassInterval, now >= historyRetry.withLock({ $0.at }) else { return }
            // A pass that failed part-way is finished first, from where it stopped (the same window: Apple's
            // pagination token belongs to its query); the next pass goes on from its end.
            let since = last - Self.historyOverlap
            let until = try unfinishedWindow(startingAt: since) ?? now
            let summary = recover(since: since, until: until)
            if summary.failures.isEmpty {
                try ledger.settings.setSetting(named: Self.lastHistoryPassSetting, to: String(until))
                historyRetry.withLock { $0 = (0, 0) }
            } else {
                let retryAt = historyRetry.withLock { retry in
                    retry.failures += 1
                    let wait = min(Milliseconds.minute << min(retry.failures - 1, 10), Self.historyRetryLongest)
                    retry.at = now + wait
                    return retry.at
                }
                logger.error(
                    "notification history pass incomplete; it is tried again",
                    ["summary": summary.description, "retry_at": "\(retryAt)"]
                )
            }
        } catch {
            logger.error("notification history pass failed", ["error": "\(error)"])
        }
    }

    /// A Get Notification History client signing with the key in use now, or nil while there is none.
    var history: AppStoreServerAPIClient? {
        guard case .success(let credentials) = keys.current else { return nil }
        return AppStoreServerAPIClient(
            credentials: credentials,
            productionURL: apple.productionURL,
            sandboxURL: apple.sandboxURL,
            httpClient: historyHTTP
        )
    }

    // MARK: running

    /// Sweeps unprocessed notifications (left by a crash or a failed action: acted on at once) and runs the daily
    /// history pass, every `reporting.pollIntervalSeconds`.
    func start() {
        worker.start(name: "linkout-notifications", intervalMilliseconds: intervalMilliseconds) { [self] in
            processor.processPending()
            historyPassIfDue(now: clock.nowMilliseconds())
        }
    }

    func stop() { worker.stop() }
}
