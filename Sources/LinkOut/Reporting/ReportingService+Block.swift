import ExternalPurchase
import Logging
import Storage

/// Reporting never stops for good: a 401, an undocumented 3xx or 4xx or a key that cannot sign blocks sending, and one probe
/// report every `ReportingBlock.probeInterval` finds out when it is over (a fixed clock, a rotated key, Apple's fault
/// gone). Every token's 10-day notice (Apple: "External Purchase Server API") depends on it.
extension ReportingService {
    /// Picks up a replaced `apple.privateKeyFile` (looked at no more than once a minute). A new key ends a wait
    /// for credentials and brings a blocked service's next probe forward to now.
    func refreshCredentials(now: Int64) {
        switch keys.refresh(now: now) {
        case .none:
            break
        case .reloaded:
            logger.warning("App Store Connect key loaded again from apple.privateKeyFile", [:])
            updateState { state in
                switch state {
                case .waitingForCredentials: state = .running
                case .blocked(var block):
                    block.nextProbeAt = min(block.nextProbeAt, now)
                    state = .blocked(block)
                case .running: break
                }
            }
        case .unusable(let problem):
            logger.error(
                "apple.privateKeyFile changed but holds no usable key; the key loaded before stays in use",
                ["problem": problem]
            )
        }
    }

    /// While blocked, sends one due report once the probe is due. The others wait: if Apple still refuses us,
    /// it does so once, not once per report.
    func probeIfBlocked(now: Int64, client: ExternalPurchaseAPIClient) {
        guard case .blocked(let block) = status, now >= block.nextProbeAt else { return }
        let due: [StoredReport]
        do {
            due = try outbox.claimDue(now: now, limit: 1, leaseUntil: now + configuration.storage.leaseSeconds * 1000)
        } catch {
            logger.error("due reports could not be read", ["error": "\(error)"])
            return
        }
        // Nothing due: nothing to probe with, and nothing waits. The next due report is the probe.
        guard let report = due.first else { return }
        logger.info("reporting blocked: sending one report to see whether Apple takes it", [:])
        send(report, client: client)
        // Still blocked (refused again, or no conclusive answer): the next probe in `probeInterval`.
        updateState { state in
            if case .blocked(var block) = state {
                block.nextProbeAt = max(block.nextProbeAt, now + ReportingBlock.probeInterval)
                state = .blocked(block)
            }
        }
    }

    /// Blocks sending (or keeps it blocked, with Apple's latest reason). Returns whether the block is new.
    func block(_ reason: ReportingBlock.Reason, detail: String, at now: Int64) -> Bool {
        let (isNew, block) = updateState { state -> (Bool, ReportingBlock) in
            var block = ReportingBlock(
                reason: reason,
                detail: detail,
                since: now,
                nextProbeAt: now + ReportingBlock.probeInterval
            )
            var isNew = true
            if case .blocked(let earlier) = state {
                block.since = earlier.since
                isNew = false
            }
            state = .blocked(block)
            return (isNew, block)
        }
        do {
            try ledger.settings.setSetting(named: ReportingBlock.setting, to: block.stored)
        } catch {
            logger.error("reporting block not recorded in the ledger", ["error": "\(error)"])
        }
        return isNew
    }

    /// Ends a block once Apple has read a report sent after it began; one critical line says so.
    func unblock(at now: Int64, ifSentAfter began: Int64) {
        let ended = updateState { state -> ReportingBlock? in
            guard case .blocked(let block) = state, began >= block.since else { return nil }
            state = .running
            return block
        }
        guard let ended else { return }
        do {
            try ledger.settings.setSetting(named: ReportingBlock.setting, to: "")
        } catch {
            logger.error("end of the reporting block not recorded in the ledger", ["error": "\(error)"])
        }
        logger.critical(
            "reporting resumed: Apple takes our reports again",
            ["reason": ended.reason.rawValue, "blocked_seconds": "\(max(0, now - ended.since) / 1000)"]
        )
    }
}
