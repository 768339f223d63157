import Storage

extension PaymentSessionRecord {
    /// The amount of the payment as recorded (decimal text in the ledger), or nil if it no longer parses.
    var money: Money? {
        Money(currency: currency, decimal: amount)
    }
}
