package import Domain
package import Lifecycle
package import Logging
import Storage
import Synchronization

/// Watches the close of the months whose deadline is near or past, on a periodic pass with the injected clock, and
/// keeps what it found for `/metrics` and `/readyz` (which read this cache and never the ledger). From
/// `Configuration.Close.warningDays` before a month's deadline while anything is outstanding it logs a warning (once
/// per state, then once a day; never a token, only counts), and the gauge `linkout_close_outstanding` says how many. It
/// also dates line items written without `creation_date` and counts the tokens near Apple's 10-day `UNREPORTED` notice
/// (Apple: "External Purchase Server API").
package final class CloseMonitor: BackgroundService {
    /// One watched month, as the last pass saw it.
    package struct Watch: Sendable, Equatable {
        package var month: CloseMonth
        package var state: CloseReport.State
        package var outstanding: Int64
        package var deadline: Int64
    }

    package struct Snapshot: Sendable, Equatable {
        package var months: [Watch]
        package var tokensNearNotice: [Environment: Int64]
        package var computedAt: Int64
    }

    /// A pass every 5 minutes: a month's deadline is days away, and each pass reads the open months' index ranges.
    package static let intervalMilliseconds: Int64 = 300_000

    let close: MonthlyClose
    let dating: LineItemDating
    let logger: Logger
    let clock: Clock
    private let worker: PeriodicWorker
    private let latest = Mutex<Snapshot?>(nil)
    /// Per month: the state last warned about, and when.
    private let warned = Mutex<[CloseMonth: (state: CloseReport.State, at: Int64)]>([:])

    package init(close: MonthlyClose, logger: Logger, clock: Clock) {
        self.close = close
        dating = LineItemDating(ledger: close.ledger)
        self.logger = logger
        self.clock = clock
        worker = PeriodicWorker(clock: clock)
    }

    package var snapshot: Snapshot? { latest.withLock { $0 } }

    package func start() {
        worker.start(name: "linkout-close", intervalMilliseconds: Self.intervalMilliseconds) { [self] in pass() }
    }

    package func stop() { worker.stop() }

    /// The months watched at `now`: every month from the earliest with anything open (a late month stays watched
    /// until it closes, however old), and always the last two before the current one (the current month is
    /// open; the one before is closing until its deadline; the one before that, if outstanding, is late).
    static func watched(at now: Int64, earliestOpen: Int64?) -> [CloseMonth] {
        let current = CloseMonth(containing: now)
        var month = min(earliestOpen.map(CloseMonth.init(containing:)) ?? current.previous, current.previous.previous)
        var months: [CloseMonth] = []
        while month < current {
            months.append(month)
            month = month.next
        }
        return months
    }

    /// Whether a watched month is shown: the last two always, an earlier one while something in it is open.
    static func isShown(_ watch: Watch, now: Int64) -> Bool {
        watch.outstanding > 0 || watch.month >= CloseMonth(containing: now).previous.previous
    }

    /// The earliest open date the last full read found, and when that read was. Tokens and money rows before it
    /// are not read again (their acceptance never goes back); a full read is made once a day in case a money row
    /// was written into an old month (a restatement keeps its line item's date).
    private let floor = Mutex<(date: Int64, readAt: Int64)?>(nil)

    private func earliestOpen(now: Int64) throws(StorageError) -> Int64? {
        let known = floor.withLock { $0 }.flatMap { now - $0.readAt < Milliseconds.day ? $0 : nil }
        let earliest = try close.ledger.monthlyClose.earliestOpen(
            environment: .production,
            since: known?.date ?? Int64.min,
            before: CloseMonth(containing: now).start
        )
        floor.withLock { $0 = (earliest ?? CloseMonth(containing: now).start, known?.readAt ?? now) }
        return earliest
    }

    /// One pass: dates new line items, reads the watched months' counts, warns, and keeps the snapshot. A read
    /// that fails keeps the previous snapshot and is logged.
    package func pass() {
        let now = clock.nowMilliseconds()
        do {
            try dating.date(extraBatches: 100)
            var months: [Watch] = []
            for month in Self.watched(at: now, earliestOpen: try earliestOpen(now: now)) {
                let outstanding = MonthlyClose.blocking(
                    try close.counts(month: month, environment: .production, now: now)
                )
                let deadline = close.deadline(of: month)
                let state = CloseReport.state(month: month, deadline: deadline, outstanding: outstanding, now: now)
                let watch = Watch(month: month, state: state, outstanding: outstanding, deadline: deadline)
                if Self.isShown(watch, now: now) { months.append(watch) }
            }
            var near: [Environment: Int64] = [:]
            for environment in Environment.allCases {
                near[environment] = try close.ledger.monthlyClose.tokensNearNotice(
                    environment: environment,
                    from: now - ReportingPolicy.unreportedNoticeMilliseconds,
                    until: now - Milliseconds.days(8)
                )
            }
            latest.withLock { $0 = Snapshot(months: months, tokensNearNotice: near, computedAt: now) }
            for watch in months { warnIfDue(watch, now: now) }
        } catch {
            logger.error("close pass could not read the ledger", ["error": "\(error)"])
        }
    }

    /// Whether a month is in its warning window (from `warningDays` before the deadline) with work outstanding.
    package static func isWarning(_ watch: Watch, now: Int64) -> Bool {
        watch.outstanding > 0 && (watch.state == .closing || watch.state == .late)
            && now >= watch.deadline - Milliseconds.days(Configuration.Close.warningDays)
    }

    private func warnIfDue(_ watch: Watch, now: Int64) {
        guard Self.isWarning(watch, now: now) else { return }
        let due = warned.withLock { warned -> Bool in
            if let last = warned[watch.month], last.state == watch.state, now - last.at < Milliseconds.day {
                return false
            }
            warned[watch.month] = (watch.state, now)
            return true
        }
        guard due else { return }
        logger.warning(
            watch.state == .late ? "month close late" : "month close due soon",
            [
                "month": watch.month.description, "state": watch.state.rawValue,
                "outstanding": "\(watch.outstanding)", "deadline": CloseReport.timestamp(watch.deadline),
                "action": "linkout close --month \(watch.month)",
            ]
        )
    }

    /// `/readyz` lines: the watched months in their warning window. A late close is a warning, not an outage:
    /// the server stays ready (visits are still recorded and reports still sent).
    package func readinessLines(now: Int64) -> [String] {
        guard let snapshot else { return [] }
        return snapshot.months.filter { Self.isWarning($0, now: now) }.map { watch in
            // The state at `now`, from the last pass's count: a deadline passed since that pass (up to 5 minutes
            // ago) read "closing … (in 0 h)" while `linkout close` said late.
            let state = CloseReport.state(
                month: watch.month,
                deadline: watch.deadline,
                outstanding: watch.outstanding,
                now: now
            )
            let when =
                now < watch.deadline
                ? "in \((watch.deadline - now) / Milliseconds.hour) h"
                : "\((now - watch.deadline) / Milliseconds.hour) h ago"
            return "close \(watch.month): \(state.rawValue), \(watch.outstanding) outstanding, deadline "
                + "\(CloseReport.timestamp(watch.deadline)) (\(when)); linkout close --month \(watch.month)"
        }
    }

    /// The gauges of the last pass (none before the first).
    func gauges(now: Int64) -> [Metrics.Gauge] {
        guard let snapshot else { return [] }
        var gauges = snapshot.months.map { watch in
            Metrics.Gauge(
                name: "linkout_close_outstanding",
                help: "Tokens and line items of the month (UTC) Apple has not accepted, as of the last close pass.",
                value: Int(watch.outstanding),
                labels: [("month", watch.month.description)]
            )
        }
        gauges += snapshot.months.map { watch in
            Metrics.Gauge(
                name: "linkout_close_deadline_seconds",
                help: "Seconds until the month's close deadline (close.deadlineDay of the next month); negative after.",
                value: Int((watch.deadline - now) / 1000),
                labels: [("month", watch.month.description)]
            )
        }
        gauges += Environment.allCases.map { environment in
            Metrics.Gauge(
                name: "linkout_tokens_near_notice",
                help: "Tokens 8 to 10 days old without an accepted report: Apple's UNREPORTED notice comes at 10 days.",
                value: Int(snapshot.tokensNearNotice[environment] ?? 0),
                labels: [("environment", environment.rawValue)]
            )
        }
        return gauges
    }
}
