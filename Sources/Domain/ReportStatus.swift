/// Apple's report statuses (`ExternalPurchaseReport.status`). Every switch over them is exhaustive, without
/// `default`, so a status Apple adds is a compile error wherever it matters.
public enum ReportStatus: String, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// The token has transactions (or corrections to them).
    case lineItem = "LINE_ITEM"
    /// The token "didn't result in any successful transactions".
    case noLineItem = "NO_LINE_ITEM"
    /// A token from a notification that this server has no record of.
    case unrecognizedToken = "UNRECOGNIZED_TOKEN"
    /// A custom-link token of a customer who has another active token of the same type.
    case duplicateToken = "DUPLICATE_TOKEN"

    /// Apple's name (`LINE_ITEM`), in logs and pages as in the JSON.
    public var description: String { rawValue }
}
