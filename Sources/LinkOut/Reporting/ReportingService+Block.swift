import Domain
import ExternalPurchase
import Logging
import Storage
import Synchronization

/// Reporting never stops for good: a 401 or an undocumented 3xx or 4xx blocks sending for the app and environment it
/// came for, a key that cannot sign for every app, and one probe report every `ReportingBlock.probeInterval` finds out
/// when it is over (a fixed clock, a rotated key, Apple's fault gone). Every token's 10-day notice (Apple: "External
/// Purchase Server API") depends on it.
extension ReportingService {
    /// Picks up a replaced `apple.privateKeyFile` (looked at no more than once a minute). A new key ends a wait
    /// for credentials and brings every block's next probe forward to now.
    func refreshCredentials(now: Int64) {
        // The key in use is the wrong one: it cannot sign, or Apple refused its JWTs and has never taken one since it
        // loaded. A key Apple took once is that key ID's key: another in its place would carry the same ID, which
        // Apple refuses (one app refused while the others are taken, or a key revoked since, say nothing for it).
        let neverTaken = !keyTakenSinceLoaded.load(ordering: .relaxed)
        let refused = status.blocks.contains {
            $0.reason == .signingFailed || ($0.reason == .unauthorized && neverTaken)
        }
        switch keys.refresh(now: now, replacingRefusedKey: refused) {
        case .none:
            break
        case .anotherKeyUnderTheSameID:
            logger.error(
                "apple.privateKeyFile now holds another key than the one in use under the same apple.keyId; a new "
                    + "App Store Connect key has its own key ID: set apple.keyId to it and restart (the key in use "
                    + "stays until then)",
                ["apple.keyId": keys.apple.keyId]
            )
        case .reloaded:
            keyTakenSinceLoaded.store(false, ordering: .relaxed)
            logger.warning("App Store Connect key loaded again from apple.privateKeyFile", [:])
            updateState { state in
                switch state {
                case .waitingForCredentials: state = .running
                case .blocked(let blocks):
                    state = .blocked(
                        blocks.map { block in
                            var block = block
                            block.nextProbeAt = min(block.nextProbeAt, now)
                            return block
                        }
                    )
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

    /// For each block whose probe is due, sends one due report it holds back (of its app; for a block of every
    /// app, of any app not blocked on its own). The others wait: if Apple still refuses us, it does so once, not
    /// once per report.
    func probeIfBlocked(now: Int64, client: ExternalPurchaseAPIClient) {
        // Apple's 429 pauses the probes too: they are reports.
        guard now >= pausedUntil.load(ordering: .relaxed) else { return }
        let status = self.status
        for block in status.blocks where now >= block.nextProbeAt {
            let scopes: ScopeFilter = block.scope.map { .only([$0]) } ?? .excluding(status.blockedScopes)
            let due: [StoredReport]
            do {
                due = try outbox.claimDue(
                    now: now,
                    limit: 1,
                    leaseUntil: now + configuration.storage.leaseSeconds * 1000,
                    scopes: scopes
                )
            } catch {
                logger.error("due reports could not be read", ["error": "\(error)"])
                return
            }
            // Nothing due: nothing to probe with, and nothing waits. The next due report is the probe.
            guard let report = due.first else { continue }
            logger.info(
                "reporting blocked: sending one report to see whether Apple takes it",
                block.scope.map { ["bundle_id": $0.bundleId.rawValue, "environment": $0.environment.rawValue] } ?? [:]
            )
            send(report, client: client)
            // Still blocked (refused again, or no conclusive answer): the next probe in `probeInterval`.
            updateState { state in
                guard case .blocked(var blocks) = state else { return }
                for index in blocks.indices where blocks[index].scope == block.scope {
                    blocks[index].nextProbeAt = max(blocks[index].nextProbeAt, now + ReportingBlock.probeInterval)
                }
                state = .blocked(blocks)
            }
        }
    }

    /// Blocks sending for `scope` (nil: every app), or keeps it blocked with Apple's latest reason. Returns whether
    /// the block is new.
    func block(
        _ reason: ReportingBlock.Reason,
        scope: ReportingScope?,
        detail: String,
        at now: Int64
    ) -> Bool {
        let (isNew, block) = updateState { state -> (Bool, ReportingBlock) in
            var block = ReportingBlock(
                reason: reason,
                scope: scope,
                detail: detail,
                since: now,
                nextProbeAt: now + ReportingBlock.probeInterval
            )
            var blocks = state.blocks
            let earlier = blocks.firstIndex { $0.scope == scope }
            if let earlier {
                block.since = blocks[earlier].since
                blocks[earlier] = block
            } else {
                blocks.append(block)
            }
            state = .blocked(Self.ordered(blocks))
            return (earlier == nil, block)
        }
        do {
            try ledger.settings.setSetting(named: ReportingBlock.setting(for: scope), to: block.stored)
        } catch {
            logger.error("reporting block not recorded in the ledger", ["error": "\(error)"])
        }
        return isNew
    }

    /// Ends the blocks a report of `scope` that Apple read proves over: its app's, and every app's (the key
    /// signs again), when the report was sent after the block began. One critical line says so for each.
    func unblock(at now: Int64, ifSentAfter began: Int64, scope: ReportingScope) {
        let ended = updateState { state -> [ReportingBlock] in
            let blocks = state.blocks
            let ended = blocks.filter { $0.holds(scope) && began >= $0.since }
            guard !ended.isEmpty else { return [] }
            let left = blocks.filter { block in !ended.contains { $0.scope == block.scope } }
            state = left.isEmpty ? .running : .blocked(left)
            return ended
        }
        for block in ended {
            do {
                try ledger.settings.setSetting(named: ReportingBlock.setting(for: block.scope), to: "")
            } catch {
                logger.error("end of the reporting block not recorded in the ledger", ["error": "\(error)"])
            }
            var metadata = ["reason": block.reason.rawValue, "blocked_seconds": "\(max(0, now - block.since) / 1000)"]
            if let scope = block.scope {
                metadata["bundle_id"] = scope.bundleId.rawValue
                metadata["environment"] = scope.environment.rawValue
            }
            logger.critical("reporting resumed: Apple takes our reports again", metadata)
        }
    }
}
