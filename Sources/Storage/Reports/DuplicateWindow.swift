public import Domain

/// A place in the order the duplicate check walks the custom-link tokens without a report: by
/// `tokenCreationDate`, then `externalPurchaseId` (the key of `tokens_custom_link_order`).
public struct CustomLinkKey: Sendable, Equatable {
    public var createdAt: Int64
    public var externalPurchaseId: ExternalPurchaseID

    public init(createdAt: Int64, externalPurchaseId: ExternalPurchaseID) {
        self.createdAt = createdAt
        self.externalPurchaseId = externalPurchaseId
    }

    /// Before every key: no token's creation date is below it, and no identifier below the empty one.
    static let start = CustomLinkKey(createdAt: Int64.min, externalPurchaseId: "")
}

/// The custom-link tokens without a report that one planner pass checks for duplicates: those after `after`
/// (from the start when nil) through `through`. A custom-link token is due at once only when it expired or is a
/// duplicate; checking every one of them each pass would read them all (an app forwards one or two per
/// install, each kept up to a year), so each pass checks a window and the next one the window after it.
public struct DuplicateWindow: Sendable, Equatable {
    public var after: CustomLinkKey?
    /// The window's last token; nil when it holds none.
    public var through: CustomLinkKey?
    /// Whether the window was cut at its size: more tokens may follow, so the next window starts after this one
    /// rather than at the start again.
    public var isFull: Bool

    public init(after: CustomLinkKey?, through: CustomLinkKey?, isFull: Bool) {
        self.after = after
        self.through = through
        self.isFull = isFull
    }

    /// A window holding no token: no unexpired custom-link token is checked.
    public static let empty = DuplicateWindow(after: nil, through: nil, isFull: false)

    /// Where the next window starts: after this one when it was full, else at the start again.
    public var next: CustomLinkKey? {
        isFull ? through : nil
    }

    /// The query's parameters for the range: after (exclusive), through (inclusive); an empty range for an
    /// empty window.
    var parameters: [SQLValue] {
        let low = after ?? .start
        let high = through ?? low
        return [
            .integer(low.createdAt), .id(low.externalPurchaseId), .integer(high.createdAt),
            .id(high.externalPurchaseId),
        ]
    }
}
