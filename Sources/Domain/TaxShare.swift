/// The tax in part of an amount that carries `tax` in all: the same share, in the currency's minor units, rounded
/// half up (a payment that charged part of its invoice, the customer's credit paying the rest, is taxed on what it
/// charged). Apple's line items work the same share out in milli-units (`AppleLineItems`); a provider that states the
/// tax of what it charged (Paddle's `grand_total_tax`) is taken at its word instead.
public enum TaxShare {
    /// `tax × part ÷ total`, rounded half up; `tax` when `part` is all of `total`, 0 for nothing.
    public static func of(_ tax: Int64, in total: Int64, part: Int64) -> Int64 {
        guard total > 0, part < total else { return part == total ? tax : 0 }
        guard part > 0 else { return 0 }
        return Int64((Int128(tax) * Int128(part) * 2 + Int128(total)) / (Int128(total) * 2))
    }
}
