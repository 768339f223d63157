import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Logging
import TestSupport
import Testing

@testable import LinkOut
@testable import Storage

/// The close of a UTC month across its states, on a manual clock: open while the month runs, closing once it
/// is over with work outstanding, a warning from 5 days before the deadline, late at the deadline, closed once
/// Apple accepted everything.
@Suite("Monthly close")
struct MonthlyCloseTests {
    static let november = CloseMonth(year: 2026, month: 11)!

    /// Apple's JSON of a one-time buy dated `at`.
    static func buy(_ lineItemId: String, at: Int64, euros: Int64 = 10, currency: String = "EUR") -> String {
        """
        {"lineItemId":"\(lineItemId)","creationDate":\(at),"eventType":"BUY","productType":"ONE_TIME_BUY",\
        "productIdentifier":"pro.lifetime","amountTaxInclusive":\(euros * 1200),"amountTaxExclusive":\(euros * 1000),\
        "taxAmount":\(euros * 200),"netAmountTaxExclusive":\(euros * 1000),"reportingCurrency":"\(currency)",\
        "pricingCurrency":"\(currency)","taxCountry":"DEU","quantity":1}
        """
    }

    @Test func aMonthGoesFromOpenThroughClosingAndLateToClosed() throws {
        let november = Self.november
        let clock = ManualClock(startingAt: november.start + Milliseconds.days(19))
        let lines = LiveApplication.LogLines()
        let harness = try ReportingHarness(graceSeconds: 172_800, clock: clock.clock)
        try harness.record("close-a", created: november.start + Milliseconds.days(9))
        try harness.record("close-b", created: clock.now - 60_000)
        try harness.record("close-october", created: november.start - 1)
        try harness.ledger.reports.storeLineItems(
            [("li-b", Self.buy("li-b", at: clock.now - 1000))],
            for: "close-b",
            at: clock.now
        )
        let monitor = CloseMonitor(
            close: MonthlyClose(ledger: harness.ledger, configuration: harness.configuration),
            logger: Logger(label: "test", level: .info, sink: .init { lines.append($0) }),
            clock: clock.clock
        )
        let close = monitor.close

        try monitor.dating.dateAll()
        var report = try close.report(month: november, now: clock.now, status: .running)
        #expect(report.state == .open)
        #expect(report.tokens.total == 2)
        #expect(report.lineItems.total == 1)
        #expect(report.tokens.byState == ["unreported": 2])
        #expect(report.outstanding == 3)
        #expect(report.deadline == "2026-12-15T00:00:00Z")
        #expect(
            report.totals?.currencies == [
                .init(reportingCurrency: "EUR", sales: 12000, tax: 2000, netTaxExclusive: 10000)
            ]
        )

        clock.advance(by: november.end - clock.now)
        report = try close.report(month: november, now: clock.now, status: .running)
        #expect(report.state == .closing)
        #expect(Set(report.outstandingList.map(\.externalPurchaseId)) == ["close-a", "close-b"])
        #expect(report.outstandingList.allSatisfy { $0.action.contains("next reporting pass") })
        monitor.pass()
        #expect(
            monitor.snapshot?.months.last
                == .init(month: november, state: .closing, outstanding: 3, deadline: november.deadline(day: 15))
        )
        #expect(lines.all.filter { $0.contains("month close") && $0.contains("\"month\":\"2026-11\"") }.count == 0)
        #expect(!monitor.readinessLines(now: clock.now).contains { $0.hasPrefix("close 2026-11") })
        // The token of the last millisecond of October is October's, whose deadline passed: late.
        #expect(monitor.snapshot?.months.first?.month == november.previous)
        #expect(monitor.snapshot?.months.first?.state == .late)
        #expect(monitor.snapshot?.months.first?.outstanding == 1)

        // Five days before the deadline: one warning, then none at the next pass the same day.
        clock.advance(by: november.deadline(day: 15) - Milliseconds.days(5) - 1 - clock.now)
        monitor.pass()
        #expect(lines.all.filter { $0.contains("month close") && $0.contains("\"month\":\"2026-11\"") }.count == 0)
        clock.advance(by: 1)
        monitor.pass()
        monitor.pass()
        #expect(
            lines.all.filter { $0.contains("month close due soon") && $0.contains("\"month\":\"2026-11\"") }.count == 1
        )
        #expect(!lines.all.joined().contains("raw"))
        #expect(
            monitor.readinessLines(now: clock.now).contains { $0.hasPrefix("close 2026-11: closing, 3 outstanding") }
        )
        let gauge = monitor.gauges(now: clock.now).first {
            $0.name == "linkout_close_outstanding" && $0.labels.first?.1 == "2026-11"
        }
        #expect(gauge?.value == 3)
        // Past the deadline before the next pass: `/readyz` says late at once, not "closing … (in 0 h)".
        let pastDeadline = november.deadline(day: 15) + 60_000
        #expect(
            monitor.readinessLines(now: pastDeadline).contains {
                $0.hasPrefix("close 2026-11: late, 3 outstanding") && $0.contains("(0 h ago)")
            },
            "\(monitor.readinessLines(now: pastDeadline))"
        )

        clock.advance(by: november.deadline(day: 15) - clock.now)
        monitor.pass()
        #expect(monitor.snapshot?.months.last?.state == .late)
        #expect(lines.all.filter { $0.contains("month close late") && $0.contains("\"month\":\"2026-11\"") }.count == 1)
        #expect(try close.report(month: november, now: clock.now, status: .running).state == .late)

        try harness.tickUntilSettled()
        report = try close.report(month: november, now: clock.now, status: .running)
        #expect(report.state == .closed)
        #expect(report.tokens.accepted == 2)
        #expect(report.lineItems.accepted == 1)
        #expect(report.outstandingList.isEmpty)
        monitor.pass()
        #expect(monitor.snapshot?.months.last?.outstanding == 0)
        #expect(monitor.snapshot?.months.last?.state == .closed)
        #expect(monitor.readinessLines(now: clock.now).isEmpty)
    }

    /// A month still late three (or more) months on stays in the gauges, `/readyz` and the dashboard's panel
    /// until it closes; it never drops out because time passed.
    @Test func aLateMonthStaysWatchedUntilItCloses() throws {
        let november = Self.november
        let clock = ManualClock(startingAt: november.start + Milliseconds.days(3))
        let harness = try ReportingHarness(clock: clock.clock)
        try harness.record("still-late", created: november.start + Milliseconds.days(2))
        try harness.record("closed-early", created: november.previous.start + Milliseconds.days(2))
        let monitor = CloseMonitor(
            close: MonthlyClose(ledger: harness.ledger, configuration: harness.configuration),
            logger: Logger(label: "test", level: .critical),
            clock: clock.clock
        )
        // Nothing is reported for months (no reporting pass runs).
        let march = CloseMonth(year: 2027, month: 3)!
        clock.advance(by: march.start + Milliseconds.days(20) - clock.now)
        monitor.pass()
        func outstanding(_ month: CloseMonth) -> Int? {
            monitor.gauges(now: clock.now).first {
                $0.name == "linkout_close_outstanding" && $0.labels.first?.1 == month.description
            }?.value
        }
        #expect(outstanding(november) == 1)
        #expect(outstanding(november.previous) == 1)
        #expect(monitor.snapshot?.months.first { $0.month == november }?.state == .late)
        #expect(monitor.readinessLines(now: clock.now).contains { $0.hasPrefix("close 2026-11: late, 1 outstanding") })
        // The months between with nothing open are not listed; the last two always are.
        #expect(
            monitor.snapshot?.months.map(\.month)
                == [november.previous, november, march.previous.previous, march.previous]
        )

        try harness.tickUntilSettled()
        monitor.pass()
        #expect(outstanding(november) == nil)
        #expect(outstanding(november.previous) == nil)
        #expect(monitor.snapshot?.months.map(\.month) == [march.previous.previous, march.previous])
    }

    /// A rejected report, a line item Apple refused, and reporting that cannot send: each is listed with why
    /// and the action, in the words of `linkout report`.
    @Test func outstandingItemsSayWhyAndWhatSettlesThem() throws {
        let november = Self.november
        let clock = ManualClock(startingAt: november.end + Milliseconds.days(1))
        let harness = try ReportingHarness(clock: clock.clock)
        try harness.record("refused", created: november.start + Milliseconds.days(3))
        try harness.ledger.reports.storeLineItems(
            [("li-refused", Self.buy("li-refused", at: november.start + Milliseconds.days(4)))],
            for: "refused",
            at: clock.now
        )
        try harness.record("waiting-one", created: november.start + Milliseconds.days(5))
        try harness.record(
            "custom",
            type: "ACQUISITION",
            created: november.start + Milliseconds.days(6),
            expires: november.start + Milliseconds.days(200)
        )
        harness.production.respond { received in
            received.report?.externalPurchaseId == "refused"
                ? FakeAppleServer.rejection([FakeAppleServer.AppleError.incorrectNetAmount("li-refused")])
                : .respond(status: 500)
        }
        harness.service.tick(now: clock.now)
        let close = MonthlyClose(ledger: harness.ledger, configuration: harness.configuration)

        // The report only reads: the refused item, stored without its date, counts once dated (`linkout close` and
        // `/admin/close` date first).
        #expect(try close.report(month: november, now: clock.now, status: .running).lineItems.total == 0)
        try LineItemDating(ledger: harness.ledger).dateAll()
        let report = try close.report(month: november, now: clock.now, status: .running)
        let byId = Dictionary(
            report.outstandingList.map { ($0.lineItemId?.rawValue ?? $0.externalPurchaseId.rawValue, $0) }
        ) { a, _ in a }
        #expect(byId["li-refused"]?.state == "needs_correction")
        #expect(byId["li-refused"]?.reason.hasPrefix("set aside by Apple's rejection") == true)
        #expect(byId["li-refused"]?.action.contains("linkout report restate refused li-refused") == true)
        #expect(byId["refused"]?.state == "rejected")
        #expect(byId["refused"]?.reason.contains("IncorrectNetAmountError") == true)
        #expect(byId["waiting-one"]?.state == "retrying")
        #expect(byId["custom"]?.state == "not_due")
        // Its only version set aside, the refused item has no money row yet: it is counted and listed all the same.
        #expect(report.lineItems.total == 1 && report.lineItems.byState == ["needs_correction": 1])
        // The custom-link token does not keep the month open; the other two tokens and the line item do.
        #expect(report.tokens.notDue == 1)
        #expect(report.outstanding == 3)
        #expect(report.state == .closing)

        let blocked = try close.report(
            month: november,
            now: clock.now,
            status: .waitingForCredentials("apple.keyId is empty"),
            listLimit: 2
        )
        #expect(blocked.tokens.byState["blocked"] == 1)
        #expect(blocked.outstandingList.count == 2)
        #expect(blocked.outstandingNotListed == 2)
        #expect(blocked.rendered(as: .text).contains("… and 2 more not listed"))
        #expect(
            blocked.rendered(as: .csv).hasPrefix(
                "month,kind,externalPurchaseId,lineItemId,date,state,reason,action\r\n"
            )
        )
    }

    /// A line item linkout's own check set aside before sending (Apple would refuse it) is not said to be
    /// Apple's rejection: no report ever carried it.
    @Test func anItemSetAsideBeforeSendingIsNotCalledApplesRejection() throws {
        let november = Self.november
        let clock = ManualClock(startingAt: november.end + Milliseconds.days(1))
        let harness = try ReportingHarness(clock: clock.clock)
        try harness.record("kept-back", created: november.start + Milliseconds.days(3))
        try harness.ledger.reports.storeLineItems(
            [("li-kept", Self.buy("li-kept", at: november.start + Milliseconds.days(4)))],
            for: "kept-back",
            at: clock.now
        )
        let stored = try #require(try harness.ledger.reports.lineItems(for: "kept-back").first)
        #expect(try harness.ledger.reports.setAsideUnsent([(stored.rowId, "MaximumValueExceededError")]) == 1)
        try LineItemDating(ledger: harness.ledger).dateAll()
        let close = MonthlyClose(ledger: harness.ledger, configuration: harness.configuration)
        let report = try close.report(month: november, now: clock.now, status: .running)
        let kept = try #require(report.outstandingList.first { $0.lineItemId?.rawValue == "li-kept" })
        #expect(kept.state == "needs_correction")
        #expect(kept.reason.hasPrefix("set aside for correction before it was sent"), "\(kept.reason)")
    }

    /// Money a provider reported in the month that is not in line items yet (a refund waiting behind its
    /// set-aside buy, an event not processed) keeps the month open in the environment of the token it waits on;
    /// one that names no token counts in production. Once made into line items (or given up), it no longer does.
    @Test func paymentEventsNotYetInLineItemsKeepTheMonthOpen() throws {
        let november = Self.november
        let clock = ManualClock(startingAt: november.end + Milliseconds.days(1))
        let harness = try ReportingHarness(clock: clock.clock)
        try harness.record("SANDBOX_paid", created: november.start + Milliseconds.days(2))
        try harness.tickUntilSettled()
        let payments = harness.ledger.payments
        for (id, day) in [("evt_refund", Int64(3)), ("evt_unnamed", 4)] {
            let event = StoredPaymentEvent(
                provider: "stripe",
                eventId: id,
                type: "charge.refunded",
                body: "{}",
                receivedAt: november.start + Milliseconds.days(day)
            )
            #expect(try payments.storePaymentEvent(event))
        }
        try payments.deferBehindHold(
            provider: "stripe",
            eventId: "evt_refund",
            externalPurchaseId: "SANDBOX_paid",
            until: .max,
            reason: "the refunded line item li is set aside for correction"
        )
        let close = MonthlyClose(ledger: harness.ledger, configuration: harness.configuration)
        let sandbox = try close.report(month: november, environment: .sandbox, now: clock.now, status: .running)
        #expect(sandbox.pendingPaymentEvents == 1 && sandbox.outstanding == 1 && sandbox.state == .closing)
        let entry = try #require(sandbox.outstandingList.first { $0.kind == "payment_event" })
        #expect(entry.externalPurchaseId == "SANDBOX_paid" && entry.state == "payment_pending")
        #expect(entry.reason.contains("stripe event evt_refund") && entry.reason.contains("set aside"))
        #expect(sandbox.rendered(as: .text).contains("payment events of the month not made into line items yet: 1"))
        let production = try close.report(month: november, now: clock.now, status: .running)
        #expect(production.pendingPaymentEvents == 1 && production.outstandingList.map(\.kind) == ["payment_event"])
        #expect(MonthlyClose.blocking(try close.counts(month: november, environment: .production, now: clock.now)) == 1)

        for id in ["evt_refund", "evt_unnamed"] {
            try payments.apply(PaymentChange(event: ("stripe", id), outcome: "refund recorded", at: clock.now))
        }
        #expect(
            try close.report(month: november, environment: .sandbox, now: clock.now, status: .running).state == .closed
        )
        #expect(try close.report(month: november, now: clock.now, status: .running).state == .closed)
    }

    /// A refund put off for a reason of its own (more than is left of the payment) waits behind no line item,
    /// but its payment's token is known: it keeps that token's environment's month open (a sandbox purchase's,
    /// here, for its first transaction and a renewal's), not production's. One for a transaction not in yet
    /// still counts in production.
    @Test func aPutOffRefundCountsInItsPaymentsEnvironment() throws {
        let november = Self.november
        let clock = ManualClock(startingAt: november.end + Milliseconds.days(1))
        let harness = try ReportingHarness(clock: clock.clock)
        let day = november.start + Milliseconds.days(2)
        try harness.record("SANDBOX_paddle", created: day)
        try harness.tickUntilSettled()
        let payments = harness.ledger.payments
        var purchase = EntitlementPolicyTests.purchase(kind: .oneTime, status: .partiallyRefunded)
        (purchase.purchaseId, purchase.provider, purchase.externalPurchaseId) = ("txn_s", "paddle", "SANDBOX_paddle")
        let renewal = PurchaseCharge(
            chargeKey: .payment("txn_renewal"),
            purchaseId: "txn_s",
            lineItemId: "txn_renewal:buy",
            amountTotal: 100,
            amountTax: 0,
            amountRefunded: 0,
            createdAt: day
        )
        try payments.apply(
            PaymentChange(event: nil, outcome: "purchase recorded", purchase: purchase, charges: [renewal], at: day)
        )
        for (id, transaction) in [("evt_over", "txn_s"), ("evt_renewal", "txn_renewal"), ("evt_early", "txn_unknown")] {
            let event = StoredPaymentEvent(
                provider: "paddle",
                eventId: id,
                type: "adjustment.updated",
                body: "{}",
                receivedAt: day + Milliseconds.hour,
                occurredAt: day + Milliseconds.hour,
                orderKey: transaction
            )
            #expect(try payments.storePaymentEvent(event))
            try payments.deferPaymentEvent(provider: "paddle", eventId: id, until: .max, reason: "more than is left")
        }
        let close = MonthlyClose(ledger: harness.ledger, configuration: harness.configuration)
        let sandbox = try close.report(month: november, environment: .sandbox, now: clock.now, status: .running)
        #expect(sandbox.pendingPaymentEvents == 2 && sandbox.state == .closing)
        let entries = sandbox.outstandingList.filter { $0.kind == "payment_event" }
        #expect(entries.map(\.externalPurchaseId) == ["SANDBOX_paddle", "SANDBOX_paddle"])
        #expect(
            entries.contains { $0.reason.contains("evt_over") }
                && entries.contains { $0.reason.contains("evt_renewal") }
        )
        // Put off for their own sake: given up after three days, not "once that item is settled" (there is none).
        #expect(entries.allSatisfy { $0.action.contains("given up and logged 3 days after it arrived") })
        let production = try close.report(month: november, now: clock.now, status: .running)
        #expect(production.pendingPaymentEvents == 1)
        #expect(production.outstandingList.first { $0.kind == "payment_event" }?.reason.contains("evt_early") == true)
        // One behind its token says so, and waits as long as what it waits for.
        let behind = StoredPaymentEvent(
            provider: "paddle",
            eventId: "evt_behind",
            type: "adjustment.updated",
            body: "{}",
            receivedAt: day + Milliseconds.hour,
            occurredAt: day + Milliseconds.hour,
            orderKey: "txn_s"
        )
        #expect(try payments.storePaymentEvent(behind))
        try payments.deferBehindHold(
            provider: "paddle",
            eventId: "evt_behind",
            externalPurchaseId: "SANDBOX_paddle",
            until: .max,
            reason: "behind a held line item"
        )
        let held = try close.report(month: november, environment: .sandbox, now: clock.now, status: .running)
            .outstandingList.first { $0.reason.contains("evt_behind") }
        #expect(held?.reason.contains("waits behind its token") == true)
        #expect(held?.action.contains("it goes on once that is settled, and is never given up") == true)
    }

    /// One line item per `lineItemId`, as Apple sees it (its latest version), like the money view and the
    /// export: a restatement or a retraction of an accepted item makes it outstanding again until Apple accepts
    /// the new version, never a second line; a held one is listed as held until it is placed; a later version
    /// Apple set aside makes it `needs_correction` though an earlier one was accepted.
    @Test func lineItemsCountOncePerLineItemAsAppleSeesThem() throws {
        let november = Self.november
        let harness = try ReportingHarness()
        let day = november.start + Milliseconds.days(3)
        try harness.record("versions", created: day)
        for (index, id) in ["kept", "restated", "withdrawn", "refused-later"].enumerated() {
            try harness.ledger.reports.storeLineItems(
                [(LineItemID(id), Self.buy(id, at: day + Int64(index)))],
                for: "versions",
                at: day
            )
        }
        try harness.tickUntilSettled()
        let close = MonthlyClose(ledger: harness.ledger, configuration: harness.configuration)
        func report() throws -> CloseReport {
            try LineItemDating(ledger: harness.ledger).dateAll()
            return try close.report(month: november, now: Clock.system.nowMilliseconds(), status: .running)
        }
        #expect(try report().lineItems.total == 4 && report().lineItems.accepted == 4)

        let restatement = Self.buy("restated", at: day + 1, euros: 4).replacingOccurrences(
            of: "\"quantity\":1",
            with: "\"quantity\":1,\"restatement\":true"
        )
        let retraction = Self.buy("withdrawn", at: day + 2).replacingOccurrences(
            of: "\"quantity\":1",
            with: "\"quantity\":1,\"restatement\":true,\"erroneouslySubmitted\":true"
        ).replacingOccurrences(of: "\"netAmountTaxExclusive\":10000", with: "\"netAmountTaxExclusive\":0")
        try harness.ledger.reports.storeLineItems([("restated", restatement)], for: "versions", at: day)
        try harness.ledger.reports.storeLineItems([("withdrawn", retraction)], for: "versions", at: day)
        try harness.record("held-one", created: day)
        try harness.ledger.reports.storeLineItems([("held", Self.buy("held", at: day + 5))], for: "held-one", at: day)
        try harness.ledger.database.writer.write { connection throws(StorageError) in
            try connection.query("UPDATE line_items SET held_since = ? WHERE line_item_id = 'held'", [.integer(day)])
        }
        var counted = try report()
        #expect(counted.lineItems.total == 5)
        #expect(counted.lineItems.accepted == 2)
        #expect(counted.lineItems.byState == ["unreported": 2, "held": 1])
        let listed = counted.outstandingList.filter { $0.kind == "line_item" }
        #expect(listed.compactMap(\.lineItemId) == ["restated", "withdrawn", "held"])
        #expect(listed.last?.action.contains("forward a token of the customer") == true)

        // The reporting pass places the held one on its customer's token; Apple takes it, the restatement and
        // the retraction.
        try harness.tickUntilSettled()
        counted = try report()
        #expect(counted.lineItems.total == 5 && counted.lineItems.accepted == 5)
        #expect(counted.state == .closed)

        // A restatement Apple refuses is set aside: the item Apple holds was accepted, but it needs correcting.
        let refused = Self.buy("refused-later", at: day + 3, euros: 7).replacingOccurrences(
            of: "\"quantity\":1",
            with: "\"quantity\":1,\"restatement\":true"
        )
        try harness.ledger.reports.storeLineItems([("refused-later", refused)], for: "versions", at: day)
        harness.production.respond { received in
            received.report?.externalPurchaseId == "versions"
                ? FakeAppleServer.rejection([FakeAppleServer.AppleError.incorrectNetAmount("refused-later")]) : nil
        }
        harness.service.tick()
        counted = try report()
        #expect(counted.lineItems.total == 5 && counted.lineItems.accepted == 4)
        #expect(counted.lineItems.byState == ["needs_correction": 1])
        #expect(counted.outstandingList.map(\.lineItemId) == ["refused-later"])
        #expect(
            counted.outstandingList.first?.action.contains("linkout report restate versions refused-later") == true
        )
    }

    /// The month's line items are counted from an index alone, and only the outstanding ones are looked up: no
    /// read of every money row or line item (SQLite's plan; PostgreSQL's depends on the table's size).
    @Test(.enabled(if: TestDatabase.postgresURL == nil))
    func lineItemCountsReadTheMonthThroughIndexes() throws {
        let harness = try ReportingHarness()
        func plan(_ sql: String, _ parameters: [SQLValue]) throws -> [String] {
            try harness.ledger.database.readers.read { connection throws(StorageError) in
                try connection.query("EXPLAIN QUERY PLAN " + sql, parameters).compactMap { $0.last?.text }
            }
        }
        let count = try plan(CloseStore.moneyRowsInMonth, [.text("production"), .integer(0), .integer(1)])
        #expect(count.contains { $0.contains("COVERING INDEX money_line_items_close") }, "\(count)")
        let open = try plan(
            "SELECT state, count(*) FROM (\(CloseStore.openItems(.production))) AS o GROUP BY state",
            CloseStore.openItemsParameters(.production, from: 0, until: 1)
        )
        let scans = open.filter { $0.hasPrefix("SCAN") && !$0.contains("SCAN o") && !$0.contains("TEMP B-TREE") }
        #expect(scans.isEmpty, "\(open)")
        #expect(open.contains { $0.contains("money_line_items_close") }, "\(open)")
        #expect(open.contains { $0.contains("line_items_close") }, "\(open)")
    }

    /// Totals per reporting currency in milli-units, from the money roll-up: refunds subtract, a restatement
    /// replaces the version before it, an item withdrawn as erroneously submitted counts nothing, a sale of
    /// another month or environment counts elsewhere. Hand-computed figures.
    @Test func totalsComeFromTheMoneyRollUp() throws {
        let november = Self.november
        let harness = try ReportingHarness()
        let day = november.start + Milliseconds.days(10)
        try harness.record("money-a", created: day - 60_000)
        try harness.record("SANDBOX_money-b", created: day - 60_000)
        let refund = """
            {"lineItemId":"r1","creationDate":\(day + 5),"eventType":"REFUND","productType":"ONE_TIME_BUY",\
            "productIdentifier":"pro.lifetime","amountTaxInclusive":6000,"amountTaxExclusive":5000,"taxAmount":1000,\
            "netAmountTaxExclusive":5000,"reportingCurrency":"EUR","pricingCurrency":"EUR","taxCountry":"DEU",\
            "referenceLineItemId":"b1"}
            """
        let withdrawn = Self.buy("b3", at: day + 3).replacingOccurrences(
            of: "\"quantity\":1",
            with: "\"quantity\":1,\"restatement\":true,\"erroneouslySubmitted\":true"
        )
        let restated = Self.buy("b2", at: day + 2, euros: 4).replacingOccurrences(
            of: "\"quantity\":1",
            with: "\"quantity\":1,\"restatement\":true"
        )
        for (id, body) in [
            ("b1", Self.buy("b1", at: day + 1)), ("b2", Self.buy("b2", at: day + 2, euros: 5)), ("b2", restated),
            ("r1", refund), ("b3", Self.buy("b3", at: day + 3)), ("b3", withdrawn),
            ("u1", Self.buy("u1", at: day + 4, euros: 2, currency: "USD")),
            ("late", Self.buy("late", at: november.end + 1)),
        ] {
            try harness.ledger.reports.storeLineItems([(LineItemID(id), body)], for: "money-a", at: day + 10)
        }
        try harness.ledger.reports.storeLineItems(
            [("s1", Self.buy("s1", at: day))],
            for: "SANDBOX_money-b",
            at: day + 10
        )
        let close = MonthlyClose(ledger: harness.ledger, configuration: harness.configuration)
        try LineItemDating(ledger: harness.ledger).dateAll()
        let totals = try #require(
            try close.report(month: november, now: november.end, status: .running).totals
        )
        #expect(
            totals.currencies == [
                .init(reportingCurrency: "EUR", sales: 16800, refunds: 6000, tax: 1800, netTaxExclusive: 9000),
                .init(reportingCurrency: "USD", sales: 2400, refunds: 0, tax: 400, netTaxExclusive: 2000),
            ]
        )
        #expect(totals.commissionEstimate == nil)
        let sandbox = try close.report(month: november, environment: .sandbox, now: november.end, status: .running)
        #expect(sandbox.totals?.currencies.map(\.sales) == [12000])
    }

    /// A month without sales under a commission regime: the estimate says it is nothing (it was left blank).
    @Test func anEmptyMonthsCommissionEstimateSaysNothing() throws {
        let harness = try ReportingHarness { $0.commission.regimes = CommissionRegime.builtIn.filter { $0.id == "jp" } }
        let close = MonthlyClose(ledger: harness.ledger, configuration: harness.configuration)
        let text = try close.report(month: Self.november, now: Self.november.end, status: .running).rendered(as: .text)
        #expect(text.contains("Apple's commission (estimate): nothing, from "), "\(text)")
    }

    /// `linkout_tokens_near_notice`: tokens 8 to 10 days old without an accepted report, Apple's notice coming
    /// at 10 days; custom-link tokens (reported when they expire) and older or reported ones are left out.
    @Test func tokensNearAppleNoticeAreCountedByThePass() throws {
        let clock = ManualClock(startingAt: Self.november.start + Milliseconds.days(20))
        let harness = try ReportingHarness(graceSeconds: 604_800, clock: clock.clock)
        let nine = clock.now - Milliseconds.days(9)
        try harness.record("near-1", created: nine)
        try harness.record("near-2", created: clock.now - Milliseconds.days(8) - 1)
        try harness.record("custom", type: "SERVICES", created: nine, expires: clock.now + Milliseconds.days(90))
        try harness.record("past", created: clock.now - Milliseconds.days(10) - 1)
        try harness.record("young", created: clock.now - Milliseconds.days(8) + 1)
        try harness.record("SANDBOX_near", created: nine)
        let monitor = CloseMonitor(
            close: MonthlyClose(ledger: harness.ledger, configuration: harness.configuration),
            logger: Logger(label: "test", level: .critical),
            clock: clock.clock
        )
        monitor.pass()
        func near(_ environment: String) -> Int? {
            monitor.gauges(now: clock.now).first {
                $0.name == "linkout_tokens_near_notice" && $0.labels.first?.1 == environment
            }?.value
        }
        #expect(near("production") == 2)
        #expect(near("sandbox") == 1)
        // Reported and accepted: no longer near anything.
        try harness.tickUntilSettled()
        monitor.pass()
        #expect(near("production") == 0)
    }

    @Test func monthsParseStrictlyAndKnowTheirBounds() throws {
        #expect(CloseMonth(parsing: "2026-11")?.description == "2026-11")
        for bad in [
            "2026-13", "2026-00", "2026-1", "26-11", "2026/11", "2026-11-01", "", "２０２６-11", "+026-11", "1969-12",
        ] {
            #expect(CloseMonth(parsing: bad) == nil, "\(bad)")
        }
        let november = try #require(CloseMonth(parsing: "2026-11"))
        #expect(november.start == 1_793_491_200_000)
        #expect(november.end == 1_796_083_200_000)
        #expect(november.deadline(day: 15) == 1_797_292_800_000)
        #expect(CloseMonth(parsing: "2028-02")?.end == CloseMonth(parsing: "2028-03")?.start)
        #expect(CloseMonth(parsing: "2028-03")!.start - CloseMonth(parsing: "2028-02")!.start == Milliseconds.days(29))
        #expect(CloseMonth(parsing: "2026-12")?.next.description == "2027-01")
        #expect(CloseMonth(containing: november.end - 1) == november)
        #expect(CloseMonth(containing: november.end) == november.next)
        #expect(
            CloseReport.state(
                month: november,
                deadline: november.deadline(day: 15),
                outstanding: 0,
                now: november.end - 1
            ) == .open
        )
        #expect(
            CloseReport.state(month: november, deadline: november.deadline(day: 15), outstanding: 0, now: november.end)
                == .closed
        )
    }

    @Test func theDeadlineDayIsValidated() throws {
        #expect(Configuration().close.deadlineDay == 15)
        #expect(try Configuration.parse(Data(#"{"close": {"deadlineDay": 28}}"#.utf8)).close.deadlineDay == 28)
        for bad in [
            #"{"close": {"deadlineDay": 0}}"#, #"{"close": {"deadlineDay": 29}}"#, #"{"close": {"deadlineDay": "15"}}"#,
            #"{"close": {"day": 15}}"#,
        ] {
            #expect(throws: ConfigurationError.self) { try Configuration.parse(Data(bad.utf8)) }
        }
    }
}

/// Migration 18 on a ledger that predates it: tokens and line items Apple already accepted are marked accepted
/// from the outbox, and line items get their date from their money row, so the first close of an upgraded
/// server is right.
@Suite("Monthly close migration")
struct MonthlyCloseMigrationTests {
    @Test func anUpgradedLedgerKnowsWhatAppleAcceptedAndWhenItsLineItemsAreDated() throws {
        let harness = try ReportingHarness()
        try harness.record("upgraded-accepted")
        try harness.addBuy("upgraded-accepted", lineItemId: "li-upgraded")
        try harness.tickUntilSettled()
        try harness.record("upgraded-waiting", created: Clock.system.nowMilliseconds() + 60_000)
        // The ledger as it was before version 18.
        try harness.ledger.database.writer.write { connection throws(StorageError) in
            try connection.execute(
                """
                DROP INDEX tokens_close; DROP INDEX line_items_close; DROP INDEX line_items_undated;
                DROP INDEX tokens_unaccepted;
                ALTER TABLE tokens DROP COLUMN accepted_at; ALTER TABLE line_items DROP COLUMN creation_date;
                ALTER TABLE line_items DROP COLUMN accepted_at; DELETE FROM schema_migrations WHERE version = 18;
                """
            )
        }
        let upgraded = try harness.configuration.storage.openLedger(role: .reader)
        defer { upgraded.close() }
        let rows = try upgraded.database.readers.read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT t.external_purchase_id, t.accepted_at IS NOT NULL, l.creation_date IS NOT NULL,
                    l.accepted_at IS NOT NULL
                FROM tokens t LEFT JOIN line_items l ON l.external_purchase_id = t.external_purchase_id
                ORDER BY t.external_purchase_id
                """
            )
        }
        #expect(rows.map { $0[0].text } == ["upgraded-accepted", "upgraded-waiting"])
        #expect(rows[0][1].integer == 1 && rows[0][2].integer == 1 && rows[0][3].integer == 1)
        #expect(rows[1][1].integer == 0)
        #expect(try upgraded.monthlyClose.dateLineItems(limit: 10) == 0)
    }
}
