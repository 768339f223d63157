import Domain
import HTTPServer
import Storage

/// `/admin/purchases`: what people paid, with the provider's ids and where each Apple line item stands.
extension AdminAPI {
    /// A purchase with the Apple line items made from it and the state of the reports carrying them.
    struct PurchaseView: Encodable {
        var purchase: PurchaseRecord
        var appleLineItems: [AppleLineItemState]
    }

    struct AppleLineItemState: Encodable {
        var lineItemId: LineItemID
        /// The report carrying it, once planned.
        var requestIdentifier: RequestIdentifier?
        /// `unreported`, `held` (waiting for an exchange rate), the report's state (`pending`, `accepted`,
        /// `rejected`), or, for a version Apple refused and that was set aside, `needs_correction` (then
        /// `corrected` once restated or dropped).
        var state: String
        /// Why a held item waits.
        var reason: String? = nil
    }

    struct PurchasePage: Encodable {
        var purchases: [PurchaseView]
        var limit: Int
        var offset: Int
        var nextOffset: Int?
    }

    /// `GET /admin/purchases?limit=&offset=`: newest first.
    func purchases(_ request: HTTPRequest) throws -> HTTPResponse {
        if let refusal = authorize(request) { return refusal }
        let paging: Paging
        switch Paging.read(request) {
        case .paging(let read): paging = read
        case .refused(let response): return response
        }
        let rows = try ledger.payments.purchases(limit: paging.limit, offset: paging.offset)
        return JSONResponse.json(
            .ok,
            PurchasePage(
                purchases: try rows.map(view),
                limit: paging.limit,
                offset: paging.offset,
                nextOffset: paging.nextOffset(afterReturning: rows.count)
            )
        )
    }

    /// `GET /admin/purchases.csv`: every purchase (the same columns as `linkout export --table purchases`).
    func purchasesCSV(_ request: HTTPRequest) throws -> HTTPResponse {
        if let refusal = authorize(request) { return refusal }
        return try exports.run {
            HTTPResponse(
                status: .ok,
                headers: [
                    "Content-Type": "text/csv; charset=utf-8",
                    "Content-Disposition": "attachment; filename=\"linkout-purchases.csv\"",
                    "Cache-Control": "no-store",
                ],
                body: Array(PurchasesCSV.render(try ledger.payments.purchases(limit: Int.max)).utf8)
            )
        }
    }

    private func view(_ purchase: PurchaseRecord) throws -> PurchaseView {
        guard let token = purchase.externalPurchaseId else {
            return PurchaseView(purchase: purchase, appleLineItems: [])
        }
        let reports = Dictionary(try ledger.reports.reports(for: token).map { ($0.requestIdentifier, $0) }) {
            first,
            _ in first
        }
        let charges = Set(try ledger.payments.charges(purchaseId: purchase.purchaseId).map(\.lineItemId))
        let items = try ledger.reports.lineItems(for: token).filter { item in
            charges.contains(item.lineItemId)
                || item.body.contains("\"referenceLineItemId\":\"\(purchase.buyLineItemId ?? "-")\"")
        }
        var states = items.map { item in
            AppleLineItemState(
                lineItemId: item.lineItemId,
                requestIdentifier: item.reportRequestIdentifier,
                state: Self.state(of: item, reports: reports)
            )
        }
        // A payment whose line item is not made yet because its exchange rate is missing: listed with the reason.
        if let held = try ledger.payments.heldPaymentEvents().first(where: { $0.externalPurchaseId == token }) {
            let made = Set(items.map(\.lineItemId))
            for id in charges.sorted() where !made.contains(id) {
                states.append(AppleLineItemState(lineItemId: id, state: "held", reason: held.reason))
            }
        }
        return PurchaseView(purchase: purchase, appleLineItems: states)
    }

    /// A set-aside version keeps the identifier of the report it left, which may be accepted since: its own
    /// state comes first.
    static func state(of item: StoredLineItem, reports: [RequestIdentifier: StoredReport]) -> String {
        if item.correction != nil { return item.correctedAt == nil ? "needs_correction" : "corrected" }
        return item.reportRequestIdentifier.flatMap { reports[$0]?.state.rawValue } ?? "unreported"
    }
}
