public import Crypto
import Domain
import Foundation
public import Lifecycle
import Synchronization

/// Starts payments as Paddle transactions (`POST /transactions`, Paddle API reference: Create a transaction) and sends
/// the person to the seller's Paddle-hosted checkout with `transaction_id`. Paddle is the merchant of record: it
/// charges, collects the tax and pays the seller out; what happens comes back in notifications (`PaddleNotification`).
///
/// Paddle offers no idempotency key (none in its documentation or SDKs; docs/provider-facts.md). One transaction per
/// intent is kept by three things: the application records the transaction id before redirecting and reuses it for the
/// same intent; nothing here retries a call on its own (a 429 or 5xx shows the person a retry page); and when a call's
/// answer was lost (a timeout, a 5xx, an unreadable 2xx), the next start for that intent first looks for a transaction
/// Paddle may have made anyway, by the intent id in its `custom_data`, and uses it.
public struct PaddlePaymentProvider: PaymentProvider {
    public let api: PaddleAPI
    let signature: TimestampedHMAC
    private let clock: Clock
    /// Intents whose last create call may have made a transaction without our learning its id. In memory: after
    /// a restart the person's next press creates a new one, and the abandoned draft expires unused.
    private let uncertain = UncertainIntents()

    public init(api: PaddleAPI, signature: TimestampedHMAC, clock: Clock = .system) {
        self.api = api
        self.signature = signature
        self.clock = clock
    }

    public var configuration: PaddleConfiguration { api.configuration }

    public func startCheckout(_ request: CheckoutRequest) throws(PaymentError) -> CheckoutRedirect {
        let body = try Self.transactionBody(for: request, priceId: configuration.priceIds[request.product.id])
        if let since = uncertain.since(request.intentId) {
            do {
                if let id = try api.openTransaction(intentId: request.intentId, since: since) {
                    uncertain.clear(request.intentId)
                    return redirect(id)
                }
            } catch {
                throw Self.paymentError(error)
            }
        }
        let started = clock.nowSeconds()
        do {
            let id = try api.createTransaction(body)
            uncertain.clear(request.intentId)
            return redirect(id)
        } catch {
            if error.mayHaveTakenEffect {
                // A minute's margin for Paddle's clock against ours.
                uncertain.mark(request.intentId, since: started - 60)
            }
            throw Self.paymentError(error)
        }
    }

    /// Lists Paddle's event types with the API key: proves Paddle takes it, changes nothing.
    public func checkCredentials() throws(PaymentError) -> String {
        do {
            try api.readEventTypes()
        } catch {
            throw Self.paymentError(error)
        }
        return "listed the event types (\(mode == .live ? "live" : "sandbox") key)"
    }

    /// The hosted checkout for a transaction: the launch URL with `transaction_id` (Paddle: "Hosted checkouts").
    func redirect(_ transactionId: String) -> CheckoutRedirect {
        let base = configuration.checkoutURL
        let separator = base.contains("?") ? "&" : "?"
        return CheckoutRedirect(url: base + separator + "transaction_id=" + transactionId, sessionId: transactionId)
    }

    static func paymentError(_ error: PaddleAPIError) -> PaymentError {
        let kind: PaymentError.Kind = error.kind == .refused ? .rejected : .unavailable
        return PaymentError(kind, error.message, status: error.status, providerCode: error.code)
    }

    /// The `POST /transactions` body for a request (Paddle API reference: Create a transaction): one item, the seller's
    /// catalog price when configured, else a non-catalog price at linkout's price; linkout's ids in `custom_data`,
    /// which Paddle copies to the subscription and every later transaction of it. Keys sorted, so the same request
    /// gives the same bytes.
    public static func transactionBody(for request: CheckoutRequest, priceId: String?) throws(PaymentError) -> [UInt8] {
        guard !request.intentId.isEmpty, request.intentId.utf8.count <= 200 else {
            throw PaymentError(.rejected, "the checkout intent id must have 1 to 200 characters")
        }
        let currency = request.price.currency.uppercased().rawValue
        var item: [String: Any] = ["quantity": 1]
        if let priceId {
            item["price_id"] = priceId
        } else {
            let amount: Int64
            do {
                // Paddle counts in the lowest denomination as Stripe does for the currencies both take (JPY and KRW
                // whole units, the rest cents). Paddle lists each currency's decimals (`GET /currencies`); only JPY's
                // was checked against it (docs/provider-facts.md).
                amount = try MinorUnits.parse(request.price.amount, currency: currency)
            } catch {
                throw PaymentError(.rejected, "price of \(request.product.id): \(error.description)")
            }
            var price: [String: Any] = [
                "description": request.product.displayName,
                "name": request.product.displayName,
                "unit_price": ["amount": String(amount), "currency_code": currency],
                "product": ["name": request.product.displayName, "tax_category": "standard"],
                "tax_mode": "account_setting",
            ]
            if case .subscription(let interval) = request.product.kind {
                price["billing_cycle"] = ["interval": interval.unit.rawValue, "frequency": interval.count]
            }
            item["price"] = price
        }
        var custom: [String: Any] = [
            "linkout_checkout_id": request.checkoutId.rawValue,
            "linkout_intent_id": request.intentId,
            "bundle_id": request.bundleId.rawValue,
            "product_id": request.product.id,
        ]
        if let token = request.externalPurchaseId { custom["external_purchase_id"] = token.rawValue }
        let body: [String: Any] = [
            "items": [item],
            "currency_code": currency,
            "collection_mode": "automatic",
            "custom_data": custom,
        ]
        guard let data = try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys]) else {
            throw PaymentError(.rejected, "the transaction could not be encoded")
        }
        return Array(data)
    }
}

/// Intents whose create call may have made a transaction, and since when (UNIX seconds).
final class UncertainIntents: Sendable {
    private let intents = Mutex<[String: Int64]>([:])

    func since(_ intent: String) -> Int64? { intents.withLock { $0[intent] } }

    func mark(_ intent: String, since: Int64) {
        intents.withLock { $0[intent] = min($0[intent] ?? .max, since) }
    }

    func clear(_ intent: String) { intents.withLock { _ = $0.removeValue(forKey: intent) } }
}
