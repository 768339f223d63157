public import Domain

/// A token that needs a person: its report was rejected by Apple for a reason linkout cannot fix by itself, or
/// line items of it were set aside with Apple's message. Listed with the token's dates, so the dashboard can
/// say how long is left before Apple's notice.
public struct AttentionEntry: Sendable, Equatable, Encodable {
    public var externalPurchaseId: ExternalPurchaseID
    public var tokenCreationDate: Int64
    public var tokenExpirationDate: Int64?
    /// The rejected report (state `rejected`), if that is why.
    public var report: StoredReport?
    /// Line items set aside and not corrected yet, each with Apple's message.
    public var lineItems: [StoredLineItem]
    /// Payment events of the token (a refund of a set-aside buy, a later renewal) waiting behind it: made into
    /// line items once it is settled, so the person settling it knows more than the item Apple named is at stake.
    public var waitingPaymentEvents: Int64
    /// Apple accepted a `LINE_ITEM` report of the token: it can no longer be reported `NO_LINE_ITEM` (Apple's
    /// `LineItemStatusRegressionError`), so that answer is not offered.
    public var appleHoldsLineItems: Bool

    public init(
        externalPurchaseId: ExternalPurchaseID,
        tokenCreationDate: Int64,
        tokenExpirationDate: Int64?,
        report: StoredReport?,
        lineItems: [StoredLineItem],
        waitingPaymentEvents: Int64 = 0,
        appleHoldsLineItems: Bool = false
    ) {
        self.externalPurchaseId = externalPurchaseId
        self.tokenCreationDate = tokenCreationDate
        self.tokenExpirationDate = tokenExpirationDate
        self.report = report
        self.lineItems = lineItems
        self.waitingPaymentEvents = waitingPaymentEvents
        self.appleHoldsLineItems = appleHoldsLineItems
    }
}
