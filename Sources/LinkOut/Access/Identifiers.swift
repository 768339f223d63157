import Crypto
import Domain

/// The ids linkout hands out: checkout ids (stable per token, unguessable), session ids and CSRF tokens.
final class Identifiers: Sendable {
    private let mac: HMACSHA256
    /// Where fresh ids come from: random bytes drawn a block at a time, so a landing's session id costs neither
    /// a getrandom(2) call nor an HMAC.
    private let randomPool = RandomPool()

    /// `secret` is 64 hex characters kept in the ledger, so ids stay the same across restarts.
    init(secret: String) {
        mac = HMACSHA256(key: Array(secret.utf8))
    }

    /// A fresh, unguessable id (sessions, checkouts without a token): 130 random bits.
    func fresh() -> String {
        Self.base32(randomPool.take(17), characters: 26)
    }

    /// A new browser session id: a fresh id followed by an HMAC of it under the installation secret, so the
    /// server can tell ids it minted from ids someone made up (`isIssuedSession`) without storing sessions.
    func session() -> String {
        let random = fresh()
        return random + sessionTag(random)
    }

    /// Whether `text` is a session id this installation minted; the tag is compared in constant time.
    func isIssuedSession(_ text: String) -> Bool {
        guard text.utf8.count == 52, text.utf8.allSatisfy({ Self.alphabet.contains($0) }) else { return false }
        let random = String(text.prefix(26))
        return HMACSHA256.constantTimeEqual(Array(text.utf8.dropFirst(26)), Array(sessionTag(random).utf8))
    }

    /// What the ledger keeps of a session id: a keyed hash, so a copy of the table holds no usable cookie. It
    /// covers the credential the session was signed in with (the admin token), so a session ends when that token
    /// is replaced: rotating a leaked token also signs out whoever used it.
    func storedSessionKey(_ id: String, signedInWith credential: String) -> String {
        Self.base32(mac(joining: ["stored-session", credential, id]), characters: 32)
    }

    private func sessionTag(_ random: String) -> String {
        Self.base32(mac(joining: ["session", random]), characters: 26)
    }

    /// The MAC of `parts` joined by NUL bytes (a label first, so ids of one kind never equal another's): every id
    /// here is one. Built in one buffer, since a landing computes three (its checkout's id, its session and the
    /// session's tag).
    private func mac(joining parts: [String]) -> [UInt8] {
        var message: [UInt8] = []
        message.reserveCapacity(parts.reduce(parts.count) { $0 + $1.utf8.count })
        for (index, part) in parts.enumerated() {
            if index > 0 { message.append(0) }
            message.append(contentsOf: part.utf8)
        }
        return mac.authenticate(bytes: message)
    }

    /// The unguessable part of a token's checkout id (`checkoutId(for:)`): the same externalPurchaseId always
    /// gives the same, and nobody without the secret can compute it (130 bits of an HMAC).
    func checkoutHMAC(externalPurchaseId: ExternalPurchaseID) -> String {
        Self.base32(mac(joining: ["checkout", externalPurchaseId.rawValue]), characters: 26)
    }

    /// The payment intent for one product in one currency on one checkout, in its `attempt`th try (a new try
    /// after a session expired or was cancelled). The same form posted twice is the same intent, so a retried
    /// POST reuses the provider's session (its `Idempotency-Key`) instead of creating a second one.
    /// The amount is part of it: after a price change, a new session (Stripe refuses a key reused with other
    /// parameters).
    func intentId(checkoutId: CheckoutID, productId: ProductID, amount: String, currency: CurrencyCode, attempt: Int)
        -> String
    {
        Self.base32(
            mac(joining: [
                "intent", checkoutId.rawValue, productId.rawValue, amount, currency.rawValue, String(attempt),
            ]),
            characters: 26
        )
    }

    /// The redemption code of a purchase: 160 bits of an HMAC under the installation secret, so the result
    /// page can show it again on every visit while the ledger keeps only `redemptionCodeHash` of it.
    func redemptionCode(purchaseId: String) -> String {
        Self.base32(mac(joining: ["redemption", purchaseId]), characters: 32)
    }

    /// What the ledger stores of a code (hex of a keyed hash): enough to find it, not enough to redeem it.
    func redemptionCodeHash(_ code: String) -> String {
        Hex.encode(mac(joining: ["redemption-hash", code]))
    }

    /// A customer credential's secret: 256 bits straight from the system generator (a bearer secret an app keeps
    /// for months), with a prefix that secret scanners and people can recognise.
    static func credentialSecret() -> String {
        credentialPrefix + base32(randomBytes(words: 4))
    }

    static let credentialPrefix = "lcr_"

    /// Whether `text` has the shape of a credential secret (the prefix and 52 base32 characters).
    static func isCredentialSecret(_ text: String) -> Bool {
        text.hasPrefix(credentialPrefix) && text.utf8.count == credentialPrefix.utf8.count + 52
            && text.utf8.dropFirst(credentialPrefix.utf8.count).allSatisfy { alphabet.contains($0) }
    }

    /// What the ledger keeps of a credential (hex of a keyed hash): enough to find it, not enough to use it. The
    /// lookup is by this hash, so the time it takes tells a guesser nothing about the secrets it is near.
    func credentialHash(_ secret: String) -> String {
        Hex.encode(mac(joining: ["credential-hash", secret]))
    }

    /// What the ledger keeps of an account whose data was erased (`linkout erase --account-token`): enough to
    /// recognise the account in a later event, never the account token itself.
    func erasedAccountKey(_ appAccountToken: String) -> String {
        Hex.encode(mac(joining: ["erased-account", appAccountToken.lowercased()]))
    }

    /// What the ledger keeps of a browser session (to recognise it, not to recreate it).
    func browserHash(session: String) -> String {
        Hex.encode(Array(mac(joining: ["browser", session]).prefix(16)))
    }

    /// The id of an entitlement event: the same cause always gives the same id (so redelivery makes no second
    /// event), and nobody can predict it.
    func eventId(_ parts: [String]) -> String {
        "evt_" + Hex.encode(Array(mac(joining: ["event"] + parts).prefix(16)))
    }

    /// Whether `text` has the shape of a redemption code (32 base32 characters).
    static func isRedemptionCode(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { alphabet.contains($0) }
    }

    /// A random id straight from the system generator: 130 random bits.
    static func random() -> String {
        base32(randomBytes(words: 3), characters: 26)
    }

    /// `words` × 8 bytes from the system generator: 64-bit draws (one getrandom(2) each) rather than a call per
    /// byte.
    private static func randomBytes(words: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(words * 8)
        for _ in 0..<words { withUnsafeBytes(of: generator.next() as UInt64) { bytes.append(contentsOf: $0) } }
        return bytes
    }

    /// The CSRF token for a form shown to `session` on `scope`: what the form acts on (a checkout's id, a payment
    /// intent's, or an admin scope), so a token of one form is refused by another.
    func csrfToken(session: String, scope: String) -> String {
        Self.base32(mac(joining: ["csrf", session, scope]), characters: 32)
    }

    func isValidCSRF(_ candidate: String, session: String, scope: String) -> Bool {
        HMACSHA256.constantTimeEqual(Array(candidate.utf8), Array(csrfToken(session: session, scope: scope).utf8))
    }

    /// Whether `text` has the shape of an id this type produced (26 base32 characters).
    static func isWellFormed(_ text: String) -> Bool {
        text.utf8.count == 26 && isInAlphabet(text)
    }

    static func isInAlphabet(_ text: String) -> Bool {
        text.utf8.allSatisfy { alphabet.contains($0) }
    }

    private static let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567".utf8)

    /// RFC 4648 base32, lowercase, unpadded: URL-safe and unambiguous to read aloud. With `characters`, only
    /// that many (each carries 5 bits), written straight into the string.
    static func base32(_ bytes: [UInt8], characters: Int? = nil) -> String {
        let count = min(characters ?? Int.max, (bytes.count * 8 + 4) / 5)
        return String(unsafeUninitializedCapacity: count) { output in
            var buffer: UInt32 = 0
            var bits = 0
            var written = 0
            for byte in bytes where written < count {
                buffer = buffer << 8 | UInt32(byte)
                bits += 8
                while bits >= 5, written < count {
                    bits -= 5
                    output[written] = alphabet[Int(buffer >> UInt32(bits) & 31)]
                    written += 1
                }
            }
            if bits > 0, written < count {
                output[written] = alphabet[Int(buffer << UInt32(5 - bits) & 31)]
                written += 1
            }
            return written
        }
    }
}
