import Domain
import Foundation

/// The close report as `linkout close` prints it and `GET /admin/close` serves it: JSON (the whole report),
/// CSV (the outstanding list, one row per token or line item, RFC 4180) or plain text for a person.
extension CloseReport {
    package enum Format: String, Sendable, CaseIterable {
        case json, csv, text
    }

    package func rendered(as format: Format) -> String {
        switch format {
        case .json: json
        case .csv: csv
        case .text: text
        }
    }

    var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return ((try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}") + "\n"
    }

    static let csvHeader = ["month", "kind", "externalPurchaseId", "lineItemId", "date", "state", "reason", "action"]

    var csv: String {
        var lines = [Self.csvHeader.joined(separator: ",")]
        for entry in outstandingList {
            let fields = [
                month, entry.kind, entry.externalPurchaseId.rawValue, entry.lineItemId?.rawValue ?? "", entry.date,
                entry.state,
                entry.reason, entry.action,
            ]
            lines.append(fields.map(LedgerCSV.quote).joined(separator: ","))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    var text: String {
        var lines = [
            "close of \(month) (\(environment), UTC): \(state.rawValue.uppercased())",
            "deadline: \(deadline) (close.deadlineDay), \(Self.timeLeft(secondsToDeadline))",
            "tokens created in the month: \(tokens.total), accepted by Apple \(tokens.accepted), outstanding "
                + "\(tokens.outstanding)" + (tokens.notDue > 0 ? " (\(tokens.notDue) not due yet)" : ""),
            "line items dated in the month: \(lineItems.total), accepted by Apple \(lineItems.accepted), "
                + "outstanding \(lineItems.outstanding)",
        ]
        if pendingPaymentEvents > 0 {
            lines.append("payment events of the month not made into line items yet: \(pendingPaymentEvents)")
        }
        for (name, counts) in [("tokens", tokens), ("line items", lineItems)] where !counts.byState.isEmpty {
            let states = counts.byState.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            lines.append("outstanding \(name) by state: " + states.joined(separator: ", "))
        }
        if let totals {
            for currency in totals.currencies {
                lines.append(
                    "\(currency.reportingCurrency): sales \(Self.amount(currency.sales)), refunds "
                        + "\(Self.amount(currency.refunds)), tax \(Self.amount(currency.tax)), net excluding tax "
                        + "\(Self.amount(currency.netTaxExclusive))"
                )
            }
            // A month without sales has nothing to estimate from: said so, not left blank.
            let estimate = totals.commissionEstimate.map { estimate in
                estimate.isEmpty
                    ? "nothing"
                    : estimate.sorted { $0.key < $1.key }.map { "\($0.key) \(Self.amount($0.value))" }
                        .joined(separator: ", ")
            }
            if totals.currencies.isEmpty { lines.append("totals: no sales or refunds dated in the month") }
            lines.append(
                "Apple's commission (estimate): "
                    + (estimate.map { "\($0), from \(totals.source)" }
                        ?? "none, as no commission regime is configured (commission.regimes)")
            )
        }
        for entry in outstandingList {
            let item = entry.lineItemId.map { " line item \($0)" } ?? ""
            lines.append(
                TerminalText.visible(
                    "- \(entry.kind) \(entry.externalPurchaseId)\(item) (\(entry.date)): \(entry.state): \(entry.reason). "
                        + "To settle: \(entry.action)"
                )
            )
        }
        if outstandingNotListed > 0 { lines.append("… and \(outstandingNotListed) more not listed") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Milli-units as decimal text (2990 → 2.990), integers only.
    static func amount(_ milli: Int64) -> String {
        let sign = milli < 0 ? "-" : ""
        let magnitude = milli.magnitude
        let fraction = String(magnitude % 1000)
        return "\(sign)\(magnitude / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }

    /// "in 3 d 4 h" or "passed 2 d 1 h ago".
    static func timeLeft(_ seconds: Int64) -> String {
        let span = seconds.magnitude
        let text = "\(span / 86_400) d \(span % 86_400 / 3600) h"
        return seconds >= 0 ? "in \(text)" : "passed \(text) ago"
    }
}
