import Domain
import Storage

/// Which token a line item the mapper makes goes on (`LineItemPlacement`): buys and renewals alike.
extension PaymentChangeMapper {
    /// Puts a line item on a token of the customer active at its date (`LineItemPlacement`): the purchase's token
    /// while it is active and not reported `DUPLICATE_TOKEN`, else another; none known → held, and the outcome
    /// says so (it is logged as a warning and shown on the dashboard until the app forwards such a token).
    func place(
        _ item: (id: LineItemID, creationDate: Int64, body: String),
        what: String,
        purchaseToken token: ExternalPurchaseID,
        chain: [StoredLineItem],
        in change: inout PaymentChange
    ) throws {
        guard let purchaseToken = try ledger.tokens.token(token) else {
            change.lineItems = [(token, item.id, item.body)]
            return
        }
        let placement = LineItemPlacement(ledger: ledger)
        if let target = try placement.token(at: item.creationDate, purchaseToken: purchaseToken, chain: chain) {
            change.lineItems = [(target.token.externalPurchaseId, item.id, item.body)]
            if target.token.externalPurchaseId != token {
                let placed = target.token.externalPurchaseId
                change.outcome +=
                    " on token \(placed), active at its date (the purchase's expired or was reported DUPLICATE_TOKEN)"
            }
        } else {
            change.lineItemsAwaitingToken = [(token, item.id, item.body)]
            change.outcome =
                "\(what) recorded; line item \(item.id) held: no token of the customer is active at its date"
        }
    }
}
