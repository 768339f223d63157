import Domain
import ExternalPurchase
import Foundation
import Storage

/// Which token a line item goes on. Apple: "To report transactions for custom link tokens, you can use any token
/// associated with the customer that is active (not expired) at the time of the transaction" ("Receiving and decoding
/// external purchase tokens"), and it refuses a line item dated outside its token's active range
/// (`LineItemCreationDateOutOfRangeError`, "Error messages and codes"). A renewal paid after the purchase's custom-link
/// token expired therefore goes on another token of the customer, or waits (held) until one is known.
struct LineItemPlacement: Sendable {
    let ledger: Ledger

    /// The token for an item dated `creationDate` of a purchase made on `purchaseToken`, whose other line items
    /// are `chain`: the purchase's token while it is active then (a token without an expiry always is) and not
    /// reported `DUPLICATE_TOKEN`; else a custom-link token of the same customer active then, the purchase token's
    /// type first. The customer is known by the `appAccountToken` of the purchase's token and of the tokens its
    /// earlier items went on, so a purchase made on a token without one has no other token to go to. Nil when no
    /// such token is known (and the purchase's is not an active duplicate): the item is held.
    func token(at creationDate: Int64, purchaseToken: StoredToken, chain: [StoredLineItem]) throws -> StoredToken? {
        let active = ReportingPolicy.isActive(purchaseToken.token, at: creationDate)
        // Read only for an active token: an inactive one is passed over whatever Apple was told of it.
        let duplicate =
            try active && ledger.reports.reports(for: purchaseToken.token.externalPurchaseId).declareDuplicate
        if active && !duplicate { return purchaseToken }
        var accounts: Set<String> = []
        for id in Set([purchaseToken.token.externalPurchaseId] + chain.map(\.externalPurchaseId)) {
            if let account = try ledger.tokens.token(id)?.appAccountToken { accounts.insert(account) }
        }
        let candidates = try ledger.reports.activeCustomerTokens(
            bundleId: purchaseToken.token.bundleId,
            environment: purchaseToken.token.environment,
            accounts: accounts.sorted(),
            at: creationDate
        )
        // A duplicate with no token of the customer to go to (a refreshed copy, grouped without an account) keeps
        // its sale: sent where Apple can refuse it and the operator sees it, never held with nothing to wait for.
        return candidates.first { $0.token.tokenType == purchaseToken.token.tokenType } ?? candidates.first
            ?? (duplicate ? purchaseToken : nil)
    }

    /// Places held line items whose customer now has a token active at their `creationDate` (one the app
    /// forwarded since, with the customer's `appAccountToken`); returns those placed. Each then waits for that
    /// token's next report. Every held item is tried, `pageSize` at a time by key: items that cannot be placed yet
    /// never keep those behind them from being tried.
    func placeAwaitingToken(pageSize: Int = 500) throws -> [(item: StoredLineItem, token: ExternalPurchaseID)] {
        var placed: [(item: StoredLineItem, token: ExternalPurchaseID)] = []
        var after: Int64 = 0
        while true {
            let page = try ledger.reports.lineItemsAwaitingToken(after: after, limit: pageSize)
            guard let last = page.last else { break }
            after = last.rowId
            placed += try place(page)
        }
        return placed
    }

    private func place(_ page: [StoredLineItem]) throws -> [(item: StoredLineItem, token: ExternalPurchaseID)] {
        var placed: [(item: StoredLineItem, token: ExternalPurchaseID)] = []
        let decoder = JSONDecoder()
        for held in page {
            guard let purchaseToken = try ledger.tokens.token(held.externalPurchaseId),
                let item = try? decoder.decode(LineItem.self, from: Data(held.body.utf8))
            else { continue }
            let chain = try ledger.reports.purchaseLineItems(containing: held.lineItemId)
            guard
                let target = try token(at: item.common.creationDate, purchaseToken: purchaseToken, chain: chain),
                try ledger.reports.placeLineItemAwaitingToken(held.rowId, on: target.token.externalPurchaseId)
            else { continue }
            // Its refunds waited behind it on the token it was held on: due now, to follow it to its token.
            try ledger.payments.releaseEventsWaiting(behind: held.externalPurchaseId)
            placed.append((held, target.token.externalPurchaseId))
        }
        return placed
    }
}
