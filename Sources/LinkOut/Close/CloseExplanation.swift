import Domain
import Storage

/// Why a token or line item is not accepted yet and what would settle it, in the words of `linkout report`.
struct CloseExplanation {
    let ledger: Ledger
    let configuration: Configuration
    let status: ReportingService.Status

    /// The states that are only waiting for a send: while reporting cannot send, they are `blocked`.
    static let blockable: Set<CloseItem.State> = [.pending, .retrying, .unreported]

    func entry(_ item: CloseItem) throws -> CloseReport.Entry {
        let (reason, action) = try explain(item)
        return CloseReport.Entry(
            kind: item.kind.rawValue,
            externalPurchaseId: item.externalPurchaseId,
            lineItemId: item.lineItemId,
            date: CloseReport.timestamp(item.date),
            state: item.state.rawValue,
            reason: reason,
            action: action
        )
    }

    private func explain(_ item: CloseItem) throws -> (String, String) {
        switch item.state {
        case .waiting:
            let due = item.date + configuration.reporting.noLineItemAfterSeconds * 1000
            return (
                "within the wait before NO_LINE_ITEM (reporting.noLineItemAfterSeconds)",
                "none: reported at \(CloseReport.timestamp(due)) unless a sale comes first"
            )
        case .notDue:
            let expiry = item.tokenExpirationDate.map(CloseReport.timestamp) ?? "its expiry"
            return (
                "an active custom-link token: Apple expects it with line items, as a duplicate, or once it expires",
                "none before \(expiry); it does not keep the month open"
            )
        case .pending:
            return ("in a report waiting to be sent", "none: it goes out with the next send")
        case .retrying:
            let last = item.lastHTTPStatus.map { "HTTP \($0)" } ?? "no answer"
            let next = item.nextAttemptAt.map(CloseReport.timestamp) ?? "soon"
            return (
                "in a report Apple has not taken yet (last answer: \(last))",
                "none: retried at \(next); linkout report status says why reports wait"
            )
        case .rejected, .needsCorrection:
            return try attention(item)
        case .held:
            return (
                "held: no token of the customer active at the line item's date is known",
                "forward a token of the customer active at \(CloseReport.timestamp(item.date)) with its "
                    + "appAccountToken (POST /v1/tokens); it is placed at the next reporting pass"
            )
        case .paymentPending:
            let event = item.paymentEvent.map { "\($0.provider) event \($0.eventId)" } ?? "a payment event"
            let waiting = item.paymentEvent?.waiting.map { " (\($0))" } ?? ""
            // One behind its token (a line item held or set aside, a chargeback Apple has not accepted yet)
            // waits as long as that does; one waiting for anything else (its purchase's own event, the provider)
            // is given up after three days.
            guard item.paymentEvent?.behindToken == true else {
                return (
                    "\(event) is not made into line items yet\(waiting)",
                    "none while what it waits for may still come (its purchase's own event, the provider's answer); "
                        + "it is given up and logged 3 days after it arrived"
                )
            }
            return (
                "\(event) waits behind its token (a held or set-aside line item, or Apple's acceptance of a report it "
                    + "builds on)\(waiting)",
                "settle what it waits for (a set-aside item: linkout report attention; a held one waits for a token "
                    + "or an exchange rate, listed in this close; Apple's acceptance comes with reporting); it goes on "
                    + "once that is settled, and is never given up"
            )
        case .waitingForRate:
            return (
                "a sale waits for an exchange rate within 48 hours of its date",
                "add the rate to payments.exchangeRates or payments.exchangeRatesFile"
            )
        case .saleWithoutLineItem:
            return (
                "a sale on it could not be made into a line item (its payment event's outcome says why: not reportable)",
                "post the sale as a line item (POST /v1/tokens/{id}/line-items); the token is never reported "
                    + "NO_LINE_ITEM meanwhile"
            )
        case .unreported:
            return (
                "due, on no report yet",
                "none: the next reporting pass plans it (linkout report --dry-run shows it; if it stays, check "
                    + "that the server runs)"
            )
        case .paymentOpen:
            return (
                "a payment started on it may still complete (an open checkout, or a payment the provider says is "
                    + "pending): its purchase would be the report",
                "none: the purchase is reported when it completes; if none does, NO_LINE_ITEM is sent once the hold "
                    + "ends (the checkout's lifetime, 7 days for a pending payment, never later than 9 days after the "
                    + "token's creation)"
            )
        case .blocked:
            return (
                "reporting cannot send: \(status.description)",
                "fix Apple's credentials (apple.issuerId, apple.keyId, apple.privateKeyFile); linkout report status"
            )
        }
    }

    /// A rejected report or items set aside: Apple's message and the command that resolves it, as `linkout
    /// report attention` words them.
    private func attention(_ item: CloseItem) throws -> (String, String) {
        let reports = ledger.reports
        let report = try item.requestIdentifier.flatMap { id throws(StorageError) in try reports.report(id) }
        let setAside = try reports.lineItems(for: item.externalPurchaseId).filter {
            $0.needsCorrection && (item.lineItemId == nil || $0.lineItemId == item.lineItemId)
        }
        // The same facts as `linkout report attention`, so both offer the same actions.
        let facts = try reports.attentionFacts(of: item.externalPurchaseId)
        let entry = AttentionEntry(
            externalPurchaseId: item.externalPurchaseId,
            tokenCreationDate: item.date,
            tokenExpirationDate: item.tokenExpirationDate,
            report: report?.state == .rejected ? report : nil,
            lineItems: setAside,
            waitingPaymentEvents: facts.waitingPaymentEvents,
            appleHoldsLineItems: facts.appleHoldsLineItems
        )
        // An item linkout's own check of Apple's rules set aside never reached Apple: saying Apple refused it
        // would send the operator looking for a report that was never made.
        let what: String
        if item.state == .rejected {
            what = "rejected by Apple"
        } else if !setAside.isEmpty, setAside.allSatisfy({ $0.reportRequestIdentifier == nil }) {
            what = "set aside for correction before it was sent: Apple would refuse it"
        } else {
            what = "set aside by Apple's rejection for correction"
        }
        let message = entry.appleMessage
        let reason = message.isEmpty ? what : "\(what): \(message)"
        return (entry.waiting.map { "\(reason); \($0)" } ?? reason, entry.resolution)
    }
}
