public import Domain

/// One landing visit to record.
public struct Visit: Sendable {
    /// The campaign parameters a landing URL may carry and the ledger keeps, in the order the journal encodes
    /// them (never reorder: older journals are decoded in this order). Also the `visits` table's column names.
    public static let utmParameterNames = ["utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content"]

    /// The token it carried, if any (US link-outs and plain visits carry none).
    public var token: TokenFields?
    public var checkoutId: CheckoutID
    public var bundleId: BundleID
    public var landingPath: String
    /// Values of `utmParameterNames` that were present.
    public var utm: [String: String]
    /// Milliseconds since 1970.
    public var at: Int64

    public init(
        token: TokenFields?,
        checkoutId: CheckoutID,
        bundleId: BundleID,
        landingPath: String,
        utm: [String: String],
        at: Int64
    ) {
        self.token = token
        self.checkoutId = checkoutId
        self.bundleId = bundleId
        self.landingPath = landingPath
        self.utm = utm
        self.at = at
    }
}
