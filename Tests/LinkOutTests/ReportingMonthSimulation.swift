import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Storage
import Synchronization
import Testing

@testable import LinkOut

/// A month of traffic against a fake Apple that rejects about 5 % of reports with realistic error bodies, the
/// clock moved in 6-hour steps, then ten quiet days so every report falls due. Every token must end accepted or
/// listed as needing attention with the action that resolves it; none silently stuck. Then the operator takes
/// those actions and every token ends accepted. Off in normal test runs; `bench/month.sh` turns it on with
/// `LINKOUT_SIM_TOKENS` (and `LINKOUT_SIM_REJECT_PERCENT`, `LINKOUT_SIM_SEED`). Prints `SIM …` lines.
@Suite("Reporting month simulation")
struct ReportingMonthSimulation {
    static let environment = ProcessInfo.processInfo.environment
    static let enabled = environment["LINKOUT_SIM_TOKENS"] != nil

    /// Where each token stands at the end.
    enum Standing: String, CaseIterable {
        case accepted = "accepted"
        case needsAttention = "needs attention"
        /// An active custom-link token with nothing to report yet (Apple's notice comes after it expires).
        case waiting = "waiting (active custom-link token, nothing due)"
        case stuck = "silently stuck"
    }

    static let step: Int64 = 6 * 3_600_000

    @Test(.enabled(if: enabled)) func month() throws {
        let tokens = Int(Self.environment["LINKOUT_SIM_TOKENS"] ?? "") ?? 2_000
        let percent = UInt64(Self.environment["LINKOUT_SIM_REJECT_PERCENT"] ?? "") ?? 5
        let seed = UInt64(Self.environment["LINKOUT_SIM_SEED"] ?? "") ?? 19
        let days = 30
        // The month ends 11 days ago, so the quiet days after it end now: no date is in Apple's future.
        let start = Clock.system.nowMilliseconds() - Int64(days + 11) * MonthTraffic.day
        let now = Atomic<Int64>(start)
        let harness = try ReportingHarness(graceSeconds: 48 * 3_600, clock: Clock { now.load(ordering: .relaxed) })
        let apple = RejectingApple(percent: percent, seed: seed)
        harness.production.respond { apple.answer($0) }
        let traffic = MonthTraffic(tokens: tokens, start: start, days: days, seed: seed)
        let began = ContinuousClock.now
        var next = 0
        var moment = start
        while moment < start + Int64(days + 10) * MonthTraffic.day {
            moment += Self.step
            now.store(moment, ordering: .relaxed)
            while next < traffic.events.count, traffic.events[next].at <= moment {
                try Self.play(traffic.events[next], on: harness.ledger)
                next += 1
            }
            harness.service.tick(now: moment)
        }
        let standings = try Self.standings(harness.ledger, end: moment)
        let elapsed = ContinuousClock.now - began
        print(
            "SIM customers=\(tokens) tokens=\(try harness.ledger.tokens.tokens().count) events=\(traffic.events.count) "
                + "reports-sent=\(harness.production.received.count) "
                + "rejections=\(apple.counts.values.reduce(0, +)) (\(percent)% of first sendings) "
                + "seconds=\(elapsed.components.seconds)"
        )
        for kind in RejectingApple.Kind.allCases {
            print("SIM   rejected: \(kind.rawValue): \(apple.counts[kind] ?? 0)")
        }
        Self.printStandings(standings, "after the month")
        let attention = try harness.ledger.reports.needingAttention(limit: 100_000)
        for (resolution, count) in Dictionary(grouping: attention, by: Self.actionKind).mapValues(\.count).sorted(by: {
            $0.key < $1.key
        }) {
            print("SIM   needs attention, resolved by \(resolution): \(count)")
        }
        for entry in attention.prefix(5) {
            print("SIM   e.g. \(entry.externalPurchaseId): Apple: \(entry.appleMessage) -> \(entry.resolution)")
        }
        #expect(standings[.stuck, default: []].isEmpty, "silently stuck: \(standings[.stuck, default: []].prefix(10))")

        // The operator resolves each as listed; Apple has nothing more against them.
        harness.production.respond { _ in nil }
        let actions = ReportActions(ledger: harness.ledger, clock: Clock { now.load(ordering: .relaxed) })
        for entry in attention { try Self.resolve(entry, with: actions) }
        for _ in 0..<4 {
            moment += Self.step
            now.store(moment, ordering: .relaxed)
            harness.service.tick(now: moment)
        }
        let after = try Self.standings(harness.ledger, end: moment)
        Self.printStandings(after, "after the operator's actions")
        #expect(after[.stuck, default: []].isEmpty)
        #expect(after[.needsAttention, default: []].isEmpty)

        // The custom-link tokens still active wait for their expiry (a year after creation), then go NO_LINE_ITEM.
        let lastExpiry = try harness.ledger.tokens.tokens().compactMap(\.token.tokenExpirationDate).max() ?? moment
        moment = max(moment, lastExpiry) + Self.step
        for _ in 0..<4 {
            moment += Self.step
            now.store(moment, ordering: .relaxed)
            harness.service.tick(now: moment)
        }
        let expired = try Self.standings(harness.ledger, end: moment)
        Self.printStandings(expired, "after the custom-link tokens expired")
        #expect(expired[.accepted, default: []].count == (try harness.ledger.tokens.tokens().count))
    }

    static func play(_ event: (at: Int64, event: MonthTraffic.Event), on ledger: Ledger) throws {
        switch event.event {
        case .token(let token):
            _ = try ledger.tokens.recordForwardedToken(
                TokenFields(
                    ExternalPurchaseToken(
                        appAppleId: 1_234_567_890,
                        bundleId: "com.example",
                        tokenCreationDate: token.created,
                        externalPurchaseId: ExternalPurchaseID(token.id),
                        tokenType: token.type,
                        tokenExpirationDate: token.expires
                    ),
                    source: .app,
                    appAccountToken: token.account
                ),
                checkoutId: "c-\(token.id)",
                at: event.at
            )
        case .lineItem(let tokenId, let lineItemId, let body):
            try ledger.reports.storeLineItems(
                [(LineItemID(lineItemId), body)],
                for: ExternalPurchaseID(tokenId),
                at: event.at
            )
        }
    }

    /// Each token's standing: accepted once Apple accepted a report and nothing of it waits (no open report, no
    /// line item outside a report); needing attention if listed so; waiting if an active custom-link token has
    /// nothing to report; otherwise stuck.
    static func standings(_ ledger: Ledger, end: Int64) throws -> [Standing: [String]] {
        let attention = Set(try ledger.reports.needingAttention(limit: 1_000_000).map(\.externalPurchaseId))
        var result: [Standing: [String]] = [:]
        for token in try ledger.tokens.tokens() {
            let id = token.token.externalPurchaseId
            let reports = try ledger.reports.reports(for: id)
            let items = try ledger.reports.lineItems(for: id)
            let standing: Standing
            if attention.contains(id) {
                standing = .needsAttention
            } else if reports.contains(where: { $0.state == .accepted })
                && reports.allSatisfy({ $0.state == .accepted })
                && items.allSatisfy({ $0.reportRequestIdentifier != nil || $0.correctedAt != nil })
            {
                standing = .accepted
            } else if reports.isEmpty && items.isEmpty && (token.token.tokenExpirationDate ?? 0) > end {
                standing = .waiting
            } else {
                standing = .stuck
            }
            result[standing, default: []].append(id.rawValue)
        }
        return result
    }

    static func printStandings(_ standings: [Standing: [String]], _ when: String) {
        let line = Standing.allCases.map { "\($0.rawValue)=\(standings[$0, default: []].count)" }
        print("SIM \(when): " + line.joined(separator: " "))
    }

    static func actionKind(_ entry: AttentionEntry) -> String {
        if !entry.lineItems.isEmpty { return "restate (or retract) the line items set aside" }
        return "resend (or report NO_LINE_ITEM)"
    }

    /// What the operator does for each: restate each line item set aside (here Apple's complaint was made up, so
    /// the same content), and send a rejected report without such items again.
    static func resolve(_ entry: AttentionEntry, with actions: ReportActions) throws {
        for item in entry.lineItems {
            _ = try actions.restate(entry.externalPurchaseId, lineItemId: item.lineItemId, body: item.body)
        }
        if entry.lineItems.isEmpty && entry.report != nil { _ = try actions.resend(entry.externalPurchaseId) }
    }
}
