/// The name under which a paid charge is found again when the provider refunds it, disputes it or names its
/// payment later: one purchase's charge is kept under every name a later event may use. Stored as text
/// (`purchase_charges.charge_key`) in the grammar `description` writes; nothing else reads or writes that grammar.
public enum ChargeKey: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The provider's payment reference: Stripe's PaymentIntent (or the Checkout Session when it has none),
    /// Paddle's transaction.
    case payment(String)
    /// A subscription invoice whose payment is not named yet (Stripe names it with `invoice_payment.paid`).
    case invoice(String)
    /// A refund or chargeback the provider keeps as its own record (a Paddle adjustment), marking it taken.
    case refund(String)
    /// A chargeback's reversal, marking it taken.
    case reversal(String)

    /// The key a stored text names; text without a known prefix is a payment reference.
    public init(text: String) {
        func after(_ prefix: String) -> String? { text.hasPrefix(prefix) ? String(text.dropFirst(prefix.count)) : nil }
        if let id = after("invoice:") {
            self = .invoice(id)
        } else if let id = after("refund:") {
            self = .refund(id)
        } else if let id = after("reversal:") {
            self = .reversal(id)
        } else {
            self = .payment(text)
        }
    }

    /// The stored text: a payment's reference as it is, the others behind their prefix.
    public var description: String {
        switch self {
        case .payment(let reference): reference
        case .invoice(let id): "invoice:" + id
        case .refund(let id): "refund:" + id
        case .reversal(let id): "reversal:" + id
        }
    }

    public init(from decoder: any Decoder) throws {
        self.init(text: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
