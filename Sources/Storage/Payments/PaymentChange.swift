public import Domain

/// Everything one payment event changes, written in one transaction together with marking the event done: a
/// crash leaves either all of it or none, and the event is then acted on again from storage.
public struct PaymentChange: Sendable {
    /// The event this change acts on (marked processed with `outcome`); nil for changes without an event.
    public var event: (provider: ProviderID, eventId: String)?
    public var outcome: PaymentOutcome
    public var purchase: PurchaseRecord?
    /// The stored purchase `purchase` was worked out from: it is written only while the row is still as read
    /// (its status, period end and last change). Instances on one PostgreSQL database act on a purchase's events
    /// side by side, and a refund of a subscription's first payment worked out while another instance recorded
    /// its renewal set the renewed subscription back to refunded, with the old period end; the change that finds
    /// the row changed is rolled back and worked out again (`StorageError.Code.conflict`). Nil for a new purchase.
    public var purchaseAsRead: PurchaseRecord?
    /// Charges (a payment and the names it goes by: a PaymentIntent, an invoice) a later refund may refer to.
    public var charges: [PurchaseCharge]
    /// A charge's new cumulative refunded amount.
    public var refund: (chargeKey: ChargeKey, amountRefunded: Int64)?
    /// The charge's refunded total `refund` was worked out from: the change is written only while it still is.
    /// Instances on one PostgreSQL database act on a charge's events side by side, and two refunds worked out
    /// from one total were both reported in full (800 refunded of 500); the one that finds the total changed is
    /// rolled back and worked out again from the new one (`StorageError.Code.conflict`).
    public var refundedBefore: Int64?
    /// A reversed chargeback: the charge's refunded amount goes down by this much (never below 0). Written with
    /// the reversal's marker, so it is applied once.
    public var refundReversal: (chargeKey: ChargeKey, amount: Int64)?
    public var sessionState: (sessionId: String, state: PaymentSessionState)?
    /// Apple line items for a token; one already stored under the same `lineItemId` is left as it is.
    public var lineItems: [(externalPurchaseId: ExternalPurchaseID, lineItemId: LineItemID, body: String)]
    /// Apple line items no token can carry yet, stored awaiting a token (`StoredLineItem.awaitingTokenSince`) under
    /// the purchase's token until one of the customer's tokens active at their `creationDate` is known.
    public var lineItemsAwaitingToken:
        [(externalPurchaseId: ExternalPurchaseID, lineItemId: LineItemID, body: String)] = []
    /// Later versions of line items Apple holds (a retraction, Apple: "Reporting corrections"), stored beside the
    /// earlier ones as an operator's `restate` or `retract` stores them, for the token's next report.
    public var restatements: [(externalPurchaseId: ExternalPurchaseID, lineItemId: LineItemID, body: String)] = []
    /// New bodies of line items awaiting a token (stored rows Apple has never seen, so rewritten in place rather
    /// than restated): a late renewal changes the days of paid service of one held after it.
    public var heldRewrites: [(rowId: Int64, lineItemId: LineItemID, body: String)] = []
    /// Line items (new ones or later versions) Apple would refuse, stored set aside with `note` (the rule and
    /// the action that settles it), as a `400` naming them would leave them: never sent as they are, listed for
    /// a person, and never holding back the token's other items.
    public var setAside:
        [(externalPurchaseId: ExternalPurchaseID, lineItemId: LineItemID, body: String, note: String)] = []
    /// Line items whose set-aside versions this change settles (marked corrected, never sent): a chargeback's
    /// REFUND set aside with its buy when the chargeback is reversed (nothing is left to report).
    public var settlesSetAside: [(externalPurchaseId: ExternalPurchaseID, lineItemId: LineItemID)] = []
    /// The purchase's redemption code (its hash), made with the purchase.
    public var redemption: RedemptionRecord?
    /// Entitlement events for the developer's backend, in the same transaction: none is lost, none doubled.
    public var webhooks: [WebhookDelivery]
    /// The event is processed but held: its Apple line item waits for an exchange rate (not for a token, which is
    /// `lineItemsAwaitingToken`). For which token, and why.
    public var hold: (externalPurchaseId: ExternalPurchaseID, reason: String)?
    /// A held event whose line items (in `lineItems`) can be made now: its hold ends with this change, and the
    /// events of the token waiting behind it are due at once.
    public var release: (provider: ProviderID, eventId: String, externalPurchaseId: ExternalPurchaseID)?
    /// The events waiting behind this token for what this change does (a refund of money a chargeback took, for
    /// its reversal) are due at once, in the same transaction, rather than at their next look.
    public var wakesEventsBehind: ExternalPurchaseID?
    public var at: Int64

    public init(
        event: (provider: ProviderID, eventId: String)?,
        outcome: PaymentOutcome,
        purchase: PurchaseRecord? = nil,
        charges: [PurchaseCharge] = [],
        refund: (chargeKey: ChargeKey, amountRefunded: Int64)? = nil,
        sessionState: (sessionId: String, state: PaymentSessionState)? = nil,
        lineItems: [(externalPurchaseId: ExternalPurchaseID, lineItemId: LineItemID, body: String)] = [],
        redemption: RedemptionRecord? = nil,
        webhooks: [WebhookDelivery] = [],
        hold: (externalPurchaseId: ExternalPurchaseID, reason: String)? = nil,
        release: (provider: ProviderID, eventId: String, externalPurchaseId: ExternalPurchaseID)? = nil,
        at: Int64
    ) {
        self.event = event
        self.outcome = outcome
        self.purchase = purchase
        self.charges = charges
        self.refund = refund
        self.sessionState = sessionState
        self.lineItems = lineItems
        self.redemption = redemption
        self.webhooks = webhooks
        self.hold = hold
        self.release = release
        self.at = at
    }
}
