/// Apple's rules for when a token is reported and what it may carry, written once. The checks in Swift are here;
/// the ledger's SQL conditions are generated from the same facts (`ReportingPolicy+SQL` in Storage), so a new
/// token type or window is one edit.
///
/// - A token that carries `tokenExpirationDate` has an active range, its creation to its expiry, both ends
///   included: "UNIX time, in milliseconds, when the token expires, after which you no longer associate the
///   token with new transactions" (Apple's `tokenExpirationDate`). Line items dated outside it are refused
///   (`LineItemCreationDateOutOfRangeError`), and the token is reported once it has expired, or earlier with
///   line items. Apple documents the field for the EU's custom-link tokens; Japan's and Brazil's tokens come
///   from the same `ExternalPurchaseCustomLink` API, so any token with an expiry is treated the same way rather
///   than reported `NO_LINE_ITEM` after the quiet wait while a purchase may still come in its range.
/// - A token without an expiry (a link-out token from `ExternalPurchaseLink.open`) is always active and is
///   reported `NO_LINE_ITEM` once the quiet wait has passed without a purchase, before Apple's `UNREPORTED`
///   notice 10 days after its creation.
/// - Only `ACQUISITION` and `SERVICES` tokens may be reported `DUPLICATE_TOKEN`
///   (`DuplicateTokenStatusNotAllowedError`).
public enum ReportingPolicy {
    /// The custom-link token types (the EU's `ExternalPurchaseCustomLink` tokens), which Apple alone lets be
    /// reported `DUPLICATE_TOKEN`. A new custom-link type is added here.
    public static let customLinkTypes: [String] = ["ACQUISITION", "SERVICES"]

    /// Apple sends `EXTERNAL_PURCHASE_TOKEN`/`UNREPORTED` for a token without an expiry that has no report 10
    /// days after its creation (apple-external-purchase.md §5.8): the deadline every "how late is it" counts to.
    public static let unreportedNoticeMilliseconds: Int64 = Milliseconds.days(10)

    /// A payment started this long (8 days) after the token's creation no longer holds its `NO_LINE_ITEM`
    /// report: a hold lasts at most a day (a Checkout Session's life), so every report is due by 9 days after
    /// creation, before Apple's `UNREPORTED` notice at 10 days.
    public static let lastHoldingPaymentMilliseconds: Int64 = Milliseconds.days(8)

    /// How far ahead of this server's clock a line item may be dated and wait for its time instead of being set
    /// aside for a person. Apple refuses an item dated in the future (`FutureDateError`), but an item a provider
    /// dated by its own clock is only "in the future" while this server's clock is behind (not yet synchronised
    /// after a boot, a virtual machine resumed) or the provider's ahead: time alone settles it. Further ahead
    /// than a day, the date itself is wrong, and a person decides.
    public static let futureDateWait: Int64 = Milliseconds.day

    /// Whether a payment on a token is a sale Apple is told of: a live one, or any on a sandbox token. A test
    /// payment (Stripe's test mode, the demo provider) on a production token is not: reporting it would declare a
    /// sale that never happened. A token with such a sale is never reported `NO_LINE_ITEM` ("no transaction"),
    /// even while linkout could not make the sale into a line item.
    public static func isSaleForApple(live: Bool, environment: Environment) -> Bool {
        live || environment == .sandbox
    }

    /// Whether the token may be reported `DUPLICATE_TOKEN`.
    public static func mayBeDuplicate(_ token: ExternalPurchaseToken) -> Bool {
        token.tokenType.map(customLinkTypes.contains) ?? false
    }

    /// Whether the token waits for its expiry (or line items) rather than the quiet wait.
    public static func isReportedAtExpiry(_ token: ExternalPurchaseToken) -> Bool {
        token.tokenExpirationDate != nil
    }

    /// Whether `milliseconds` lies in the token's active range (a token without an expiry always is).
    public static func isActive(_ token: ExternalPurchaseToken, at milliseconds: Int64) -> Bool {
        guard let expiry = token.tokenExpirationDate else { return true }
        return token.tokenCreationDate <= milliseconds && milliseconds <= expiry
    }

    /// Whether the token's active range is over at `milliseconds`: after its last millisecond.
    public static func hasExpired(_ token: ExternalPurchaseToken, at milliseconds: Int64) -> Bool {
        hasExpired(expiresAt: token.tokenExpirationDate, at: milliseconds)
    }

    /// The same for a token known only by its expiry (nil: none, never expired).
    public static func hasExpired(expiresAt expiry: Int64?, at milliseconds: Int64) -> Bool {
        expiry.map { milliseconds > $0 } ?? false
    }
}
