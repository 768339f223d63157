/// A line item posted for a token (Apple's JSON), and the report that carries it once there is one.
public struct StoredLineItem: Sendable, Equatable, Codable {
    public var rowId: Int64
    public var externalPurchaseId: String
    public var lineItemId: String
    public var body: String
    public var receivedAt: Int64
    public var reportRequestIdentifier: String?
}
