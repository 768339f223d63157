public import Domain

/// A token created in a month, or a line item dated in it, that Apple has not accepted yet, with where it stands
/// in the outbox: what the monthly close lists and counts by `state`.
public struct CloseItem: Sendable, Equatable {
    public enum Kind: String, Sendable, Codable {
        case token
        case lineItem = "line_item"
        /// A provider's payment event of the month not made into line items yet (`CloseStore+PaymentEvents`).
        case paymentEvent = "payment_event"
    }

    /// Where it stands, from the outbox: the close says why it is not accepted and what would settle it.
    public enum State: String, Sendable, Codable, CaseIterable {
        /// A token within `reporting.noLineItemAfterSeconds` of its creation: reported `NO_LINE_ITEM` after it.
        case waiting
        /// An active custom-link token: Apple expects it with its line items, as a duplicate, or once expired.
        case notDue = "not_due"
        /// In a report that waits for its first send.
        case pending
        /// In a report Apple has not taken yet after an attempt (5xx, timeout, 429): retried with backoff.
        case retrying
        /// In a report Apple rejected: the token needs attention.
        case rejected
        /// Set aside by Apple's rejection, waiting for a restatement or a retraction.
        case needsCorrection = "needs_correction"
        /// A line item no token of the customer active at its date can carry yet.
        case held
        /// A sale whose line item waits for an exchange rate.
        case waitingForRate = "waiting_for_rate"
        /// A token with a sale linkout could not make into a line item (`ReportingPolicy.isSaleForApple`): never
        /// reported `NO_LINE_ITEM`, it waits for a person to post the sale.
        case saleWithoutLineItem = "sale_without_line_item"
        /// Due, but on no report yet: the next reporting pass plans it.
        case unreported
        /// Past its quiet wait (or, a custom-link token, its expiry) without a line item, but a payment started
        /// on it may still complete (a checkout open within the provider's session lifetime, a payment the
        /// provider says is pending): its purchase would be the report, so `NO_LINE_ITEM` waits for it
        /// (`ReportStore.paymentHoldsNoLineItem`, `paymentHoldsExpiredToken`).
        case paymentOpen = "payment_open"
        /// A payment event (a sale, renewal, refund) not made into line items yet: it waits for what it depends
        /// on (its purchase, a line item of its token held or set aside before it), or is being processed.
        case paymentPending = "payment_pending"
        /// Would be sent, but Apple refuses our credentials or none are configured (set by the application,
        /// which knows the reporting service's state).
        case blocked
    }

    public var kind: Kind
    public var externalPurchaseId: ExternalPurchaseID
    /// For a line item: Apple's `lineItemId`.
    public var lineItemId: LineItemID?
    /// The token's `tokenCreationDate`, or the line item's `creationDate` (UNIX ms).
    public var date: Int64
    public var state: State
    /// The token's expiry (custom-link tokens), for the time left before Apple's notice.
    public var tokenExpirationDate: Int64?
    /// The open report carrying it, if any.
    public var requestIdentifier: RequestIdentifier?
    /// The open report's next attempt and its last HTTP answer, for a retrying one.
    public var nextAttemptAt: Int64?
    public var lastHTTPStatus: Int64?
    /// For a payment event: which, and why it waits.
    public var paymentEvent: PaymentEvent?

    /// A payment event by its provider and id, and why it waits (its outcome so far), if it said.
    public struct PaymentEvent: Sendable, Equatable {
        public var provider: String
        public var eventId: String
        public var waiting: String?
        /// It waits behind its token (a line item held for a token or a rate, or set aside by Apple; a chargeback
        /// Apple has not accepted yet), as long as that does; otherwise it waits for something else (its
        /// purchase's own event, the provider) and is given up three days after it arrived.
        public var behindToken = false
    }

    public init(
        kind: Kind,
        externalPurchaseId: ExternalPurchaseID,
        lineItemId: LineItemID? = nil,
        date: Int64,
        state: State
    ) {
        self.kind = kind
        self.externalPurchaseId = externalPurchaseId
        self.lineItemId = lineItemId
        self.date = date
        self.state = state
    }
}
