import Domain

/// Checkout ids begin with a time, so the ledger's index of checkouts grows at its end.
///
/// The unguessable part is an HMAC, random to the ledger: with it alone every landing put its checkout into a
/// random page of an index as large as the ledger, and each such page is written twice (the write-ahead log,
/// then the checkpoint). Led by the token's creation time, the checkouts of a second share the same few pages.
extension Identifiers {
    /// A checkout id now: the time (45 bits of milliseconds, past the year 3000), then 26 characters of an HMAC
    /// (130 bits). Ids minted before carry the HMAC alone, and stay valid.
    static let checkoutIdLengths: Set = [
        CheckoutID.untimedLength, CheckoutID.timeLength + CheckoutID.untimedLength,
    ]

    /// The checkout for a token: the same token always maps to the same id (its creation time leads, an HMAC of
    /// its `externalPurchaseId` follows), and nobody without the secret can compute it.
    func checkoutId(for token: ExternalPurchaseToken) -> CheckoutID {
        CheckoutID(
            Self.checkoutTime(token.tokenCreationDate) + checkoutHMAC(externalPurchaseId: token.externalPurchaseId)
        )
    }

    /// The checkout of a visit without a token: a fresh id led by the visit's time.
    func freshCheckoutId(at milliseconds: Int64) -> CheckoutID {
        CheckoutID(Self.checkoutTime(milliseconds) + fresh())
    }

    /// Whether `text` has the shape of a checkout id (either length, the id alphabet).
    static func isCheckoutId(_ text: String) -> Bool {
        checkoutIdLengths.contains(text.utf8.count) && isInAlphabet(text)
    }

    /// `milliseconds` (clamped to 0...2⁴⁵-1: a forged token may say anything) as 9 characters of the id alphabet
    /// in ASCII order, so ids sort by time.
    static func checkoutTime(_ milliseconds: Int64) -> String {
        let limit: Int64 = (1 << 45) - 1
        let value = UInt64(min(max(milliseconds, 0), limit))
        let characters = (0..<CheckoutID.timeLength).reversed().map { position in
            sortedAlphabet[Int(value >> UInt64(5 * position) & 31)]
        }
        return String(decoding: characters, as: UTF8.self)
    }

    /// The id alphabet's characters in ASCII order: digits sort before letters.
    private static let sortedAlphabet = Array("234567abcdefghijklmnopqrstuvwxyz".utf8)
}
