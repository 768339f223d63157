import Domain
import Foundation
import Lifecycle
import Storage

/// The signed-in dashboard page: chart, funnel, Apple report states and what is failing.
extension DashboardRoute {
    /// Rows shown of failing reports and webhooks; the JSON admin API lists them all.
    static let failingRows = 20
    /// Characters shown of Apple's or a receiver's answer.
    static let reasonCharacters = 300

    func overviewContext(session: String) throws -> Template.Context {
        // Visits acknowledged a moment ago may still sit in the journal: the operator sees them at once (unless a
        // burst is being folded in; then the page answers without them).
        ledger.awaitRecentVisits()
        let now = clock.nowMilliseconds()
        var context: Template.Context = [
            "csrf": .text(sessions.csrfToken(session, scope: .signedIn)),
            "on_dashboard": .flag(true),
            "now": .text(DashboardTime.timestamp(now)),
            "reporting": .text(reporting.status.description),
            "reporting_blocked": .flag(Self.isBlocked(reporting.status)),
            "days": .text(String(Self.days)),
        ]
        // A full disk refuses every landing, or the tables the visits the journal holds: the page says so at the
        // top, as `/readyz` does.
        ledger.recheckWriteFailure()
        if let failure = ledger.landingFailure ?? ledger.writeFailure {
            context[ledger.landingFailure != nil ? "landings_refused" : "tables_refusing"] = .flag(true)
            context["ledger_failure"] = .text(
                failure.code == .diskFull ? "the data folder's disk is full (\(failure))" : "\(failure)"
            )
        }
        addChart(to: &context)
        let funnel = try ledger.dashboard.funnel(since: window.first * Milliseconds.day)
        context["funnel"] = .list(Self.funnelSteps(funnel))
        try addReports(to: &context, now: now)
        try addWebhooks(to: &context, now: now)
        try addRateHolds(to: &context)
        addClose(to: &context, now: now)
        return context
    }

    /// Sales whose Apple line item waits for an exchange rate within 48 hours of the sale (Apple: "exchangeRate"): the
    /// operator has to supply one, so they are shown with the reason.
    private func addRateHolds(to context: inout Template.Context) throws {
        let held = try ledger.payments.heldPaymentEvents(limit: Self.failingRows)
        context["has_rate_holds"] = .flag(!held.isEmpty)
        context["rate_hold_rows"] = .list(
            held.map { item in
                [
                    "token": .text(item.externalPurchaseId.rawValue),
                    "href": .text(Self.detailPath(item.externalPurchaseId)),
                    "event": .text(item.event.eventId),
                    "since": .text(DashboardTime.timestamp(item.event.processedAt ?? item.event.receivedAt)),
                    "reason": .text(String(item.reason.prefix(Self.reasonCharacters))),
                ]
            }
        )
    }

    /// Whether reports are held back because Apple refuses us: the page says so at the top.
    static func isBlocked(_ status: ReportingService.Status) -> Bool {
        if case .blocked = status { true } else { false }
    }

    private func addChart(to context: inout Template.Context) {
        guard let chart = try? chartData() else { return }
        let series = DashboardChart.series.enumerated().map { index, series -> Template.Context in
            [
                "index": .text(String(index)),
                "label": .text(series.label),
                "total": .text(String(chart.total(series: index))),
            ]
        }
        context["series"] = .list(series)
        let summary = DashboardChart.series.indices.map {
            "\(DashboardChart.series[$0].label) \(chart.total(series: $0))"
        }
        context["chart_alt"] = .text(
            "Bar chart of tokens first seen per day over the last \(Self.days) days: \(chart.total) in total ("
                + summary.joined(separator: ", ") + "). The numbers per day are in the table below."
        )
        // Newest day first: the day an operator looks for is usually today.
        context["chart_days"] = .list(
            chart.counts.enumerated().reversed().map { index, counts in
                [
                    "day": .text(DashboardTime.day(chart.firstDay + Int64(index))),
                    "cells": .list(counts.map { ["count": .text(String($0))] }),
                    "total": .text(String(counts.reduce(0, +))),
                ]
            }
        )
    }

    static func funnelSteps(_ funnel: Funnel) -> [Template.Context] {
        let steps: [(String, Int64)] = [
            ("Landing (tokens recorded)", funnel.tokens),
            ("Checkout (product chosen)", funnel.checkouts),
            ("Payment (purchase completed)", funnel.payments),
            ("Reported (accepted by Apple)", funnel.reported),
        ]
        return steps.map { label, count in
            let share = funnel.tokens > 0 ? "\(count * 100 / funnel.tokens) %" : ""
            return ["label": .text(label), "count": .text(String(count)), "share": .text(share)]
        }
    }

    private func addReports(to context: inout Template.Context, now: Int64) throws {
        let summary = try ledger.reports.reportSummary()
        context["report_states"] = .list(
            ReportState.allCases.map { state in
                ["state": .text(state.rawValue), "count": .text(String(summary.counts[state] ?? 0))]
            }
        )
        if let oldest = summary.oldestUnreportedCreation {
            // Saturating: a stored date is whatever an old token or an older version recorded.
            context["oldest"] = .text("yes")
            context["oldest_age"] = .text(DashboardTime.age(Int64.saturating(now, minus: oldest)))
            context["oldest_at"] = .text(DashboardTime.timestamp(oldest))
            // The first notice Apple sends for an unreported token: 10 days after a token's creation, a custom-link
            // token's at its expiry (which may be months after the oldest creation).
            let left = summary.firstUnreportedNotice.map { Int64.saturating($0, minus: now) } ?? Int64.max
            if left <= 0 {
                context["oldest_class"] = .text("late")
                context["oldest_note"] = .text(
                    "Past Apple's notice by \(DashboardTime.age(Int64.saturating(0, minus: left))): Apple may have "
                        + "sent UNREPORTED."
                )
            } else {
                // Under two days left is when a stuck outbox needs a person.
                context["oldest_class"] = .text(left < 2 * Milliseconds.day ? "warn" : "ok")
                context["oldest_note"] = .text(
                    left == Int64.max ? "" : "\(DashboardTime.age(left)) left before Apple's first notice."
                )
            }
        }
        // Revenue Apple cannot take yet: a renewal dated after every known token of the customer expired.
        let held = try ledger.reports.lineItemsAwaitingToken(limit: Self.failingRows)
        context["has_held_line_items"] = .flag(!held.isEmpty)
        context["held_rows"] = .list(
            held.map { item in
                [
                    "href": .text(Self.detailPath(item.externalPurchaseId)),
                    "token": .text(item.externalPurchaseId.rawValue),
                    "line_item": .text(item.lineItemId.rawValue),
                    "since": .text(item.awaitingTokenSince.map(DashboardTime.timestamp) ?? "—"),
                ]
            }
        )
        try addAttention(to: &context, now: now)
        let failing = try ledger.dashboard.failingReports(limit: Self.failingRows)
        context["has_failing_reports"] = .flag(!failing.isEmpty)
        context["report_rows"] = .list(
            failing.map { report in
                [
                    "href": .text(Self.detailPath(report.externalPurchaseId)),
                    "token": .text(report.externalPurchaseId.rawValue),
                    "status": .text(report.status.rawValue),
                    "state": .text(report.state.rawValue),
                    "attempts": .text(String(report.attempts)),
                    "last_attempt": .text(report.lastAttemptAt.map(DashboardTime.timestamp) ?? "—"),
                    "reason": .text(
                        Self.reason(status: report.lastHTTPStatus, text: report.lastResponse)
                    ),
                ]
            }
        )
    }

    /// Tokens a person must act on, most urgent first: Apple's message, the time left before Apple's notice (Apple:
    /// "External Purchase Server API", "subtype"), and the command that resolves it.
    private func addAttention(to context: inout Template.Context, now: Int64) throws {
        let entries = try ledger.reports.needingAttention(limit: Self.failingRows)
        context["has_attention"] = .flag(!entries.isEmpty)
        context["attention_count"] = .text(String(try ledger.reports.attentionCount()))
        context["attention_rows"] = .list(
            entries.map { entry in
                let left = Int64.saturating(entry.noticeAt, minus: now)
                let what =
                    entry.report.map { "report \($0.status.rawValue) rejected" }
                    ?? "\(entry.lineItems.count) line item(s) set aside"
                let message = entry.appleMessage
                return [
                    "href": .text(Self.detailPath(entry.externalPurchaseId)),
                    "token": .text(entry.externalPurchaseId.rawValue),
                    "what": .text(what),
                    "message": .text(
                        message.count > Self.reasonCharacters
                            ? String(message.prefix(Self.reasonCharacters)) + "…" : message
                    ),
                    "left": .text(
                        left > 0
                            ? "\(DashboardTime.age(left)) left"
                            : "past by \(DashboardTime.age(Int64.saturating(0, minus: left)))"
                    ),
                    "left_class": .text(left < 2 * Milliseconds.day ? "late" : "warn"),
                    "action": .text(entry.resolution),
                ]
            }
        )
    }

    private func addWebhooks(to context: inout Template.Context, now: Int64) throws {
        let counts = try ledger.entitlements.webhookCounts()
        context["webhook_states"] = .list(
            WebhookState.allCases.map { state in
                ["state": .text(state.rawValue), "count": .text(String(counts[state] ?? 0))]
            }
        )
        let failing = try ledger.dashboard.failingWebhooks(limit: Self.failingRows)
        context["has_failing_webhooks"] = .flag(!failing.isEmpty)
        context["webhook_rows"] = .list(
            failing.map { delivery in
                [
                    "event": .text(delivery.eventId),
                    "type": .text(delivery.type),
                    "state": .text(delivery.state.rawValue),
                    "attempts": .text(String(delivery.attempts)),
                    "last_attempt": .text(delivery.lastAttemptAt.map(DashboardTime.timestamp) ?? "—"),
                    "reason": .text(Self.reason(status: delivery.lastStatus, text: delivery.lastError)),
                ]
            }
        )
    }

    /// `HTTP 400: {"errors":…}`, shortened: outsiders' text, escaped by the template like everything else.
    static func reason(status: Int64?, text: String?) -> String {
        var parts: [String] = []
        if let status { parts.append("HTTP \(status)") }
        if let text, !text.isEmpty {
            parts.append(text.count > reasonCharacters ? String(text.prefix(reasonCharacters)) + "…" : text)
        }
        return parts.isEmpty ? "—" : parts.joined(separator: ": ")
    }

    /// RFC 3986 unreserved characters, ASCII only.
    static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
    )

    /// The detail page of a token; the id is percent-encoded, as it came from outside.
    static func detailPath(_ externalPurchaseId: ExternalPurchaseID) -> String {
        return "/admin/detail?id="
            + (externalPurchaseId.rawValue.addingPercentEncoding(withAllowedCharacters: unreserved) ?? "")
    }
}
