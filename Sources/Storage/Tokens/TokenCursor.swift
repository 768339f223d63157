public import Domain

/// Where a page of the token list ends, for the next to start after it: the last token's first-seen time and
/// externalPurchaseId (the list's order). Written `<firstSeenAt>:<externalPurchaseId>`; the id may hold any
/// character, `:` too, so only the first `:` separates.
public struct TokenCursor: Sendable, Equatable {
    public var firstSeenAt: Int64
    public var externalPurchaseId: ExternalPurchaseID

    public init(firstSeenAt: Int64, externalPurchaseId: ExternalPurchaseID) {
        self.firstSeenAt = firstSeenAt
        self.externalPurchaseId = externalPurchaseId
    }

    /// The cursor after `token`.
    public init(after token: StoredToken) {
        self.init(firstSeenAt: token.firstSeenAt, externalPurchaseId: token.token.externalPurchaseId)
    }

    /// Reads `<firstSeenAt>:<externalPurchaseId>`; nil for anything else.
    public init?(_ text: String) {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let time = text[..<colon]
        guard !time.isEmpty, time.utf8.count <= 19, time.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let firstSeenAt = Int64(time)
        else { return nil }
        self.init(
            firstSeenAt: firstSeenAt,
            externalPurchaseId: ExternalPurchaseID(String(text[text.index(after: colon)...]))
        )
    }

    public var text: String { "\(firstSeenAt):\(externalPurchaseId)" }
}
