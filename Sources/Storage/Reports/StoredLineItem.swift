public import Domain

/// A line item posted for a token (Apple's JSON), and the report that carries it once there is one.
public struct StoredLineItem: Sendable, Equatable, Codable {
    public var rowId: Int64
    public var externalPurchaseId: ExternalPurchaseID
    public var lineItemId: LineItemID
    public var body: String
    public var receivedAt: Int64
    public var reportRequestIdentifier: RequestIdentifier?
    /// Set while the item awaits a token (none of the customer's was active at its `creationDate`; column
    /// `held_since`): it goes on no report until it is placed on such a token. Not to be confused with a payment
    /// event held for an exchange rate (`PaymentChange.hold`).
    public var awaitingTokenSince: Int64? = nil
    /// Apple's message when it refused this item (Apple: "SendReportErrorResponse"): set aside, never sent as it is.
    public var correction: String?
    /// When the operator restated or dropped an item set aside.
    public var correctedAt: Int64?

    /// Set aside by Apple's rejection and not yet restated or dropped.
    /// The API keeps the name it was published with: `heldSince`.
    private enum CodingKeys: String, CodingKey {
        case rowId, externalPurchaseId, lineItemId, body, receivedAt, reportRequestIdentifier, correction, correctedAt
        case awaitingTokenSince = "heldSince"
    }

    /// Set aside because Apple refused it or would (`correction`): never sent as it is, and Apple holds nothing of
    /// it, so it is no earlier item of its token either (Apple: "SendReportErrorResponse").
    public var isSetAside: Bool { correction != nil }

    public var needsCorrection: Bool { correction != nil && correctedAt == nil }
}
