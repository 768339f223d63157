package import Storage

/// The close's one write: a line item stored without a `creation_date` gets Apple's `creationDate` from its body
/// (when it arrived, for a body without one), which places it in its month. It runs before the close is read (the
/// monitor's periodic pass, and `linkout close` and `GET /admin/close` before they build their report), so that
/// reading the close never writes.
package struct LineItemDating: Sendable {
    let ledger: Ledger

    package init(ledger: Ledger) {
        self.ledger = ledger
    }

    /// How many line items one transaction dates.
    static let batch = 1000

    /// Dates every line item still undated, so a report made next counts the ones written a moment ago (usually
    /// none: a partial index finds them).
    package func dateAll() throws(StorageError) {
        while try ledger.monthlyClose.dateLineItems(limit: Self.batch) > 0 {}
    }

    /// Dates batch after batch until one comes back short, and stops after `extraBatches` more than the first: a
    /// periodic pass stays short however many arrived, and the next pass goes on.
    func date(extraBatches: Int) throws(StorageError) {
        var batches = 0
        while try ledger.monthlyClose.dateLineItems(limit: Self.batch) == Self.batch, batches < extraBatches {
            batches += 1
        }
    }
}
