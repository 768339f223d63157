import Crypto
import Foundation
import HTTPServer
import Logging
import Payments
import Synchronization

/// A stand-in for Paddle Billing's API on 127.0.0.1, reached through the real libcurl client (Paddle API reference:
/// Transactions): `POST /transactions` (bearer key, `Paddle-Version: 1`, one catalog or non-catalog item,
/// `custom_data`), `GET /transactions/{id}` (with `?include=address`, the customer's country) and `GET /transactions`
/// (open transactions created since a time, newest first). It can be scripted to answer 429 or 5xx first, before or
/// after making the transaction (a lost answer), and it signs notifications the way Paddle does.
package final class FakePaddleServer: Sendable {
    package enum Behavior: Sendable {
        /// Answer like Paddle.
        case normal
        /// Answer this without doing anything (a rate limit, an outage before the work).
        case respond(status: Int, body: String = "")
        /// Make the transaction, then answer this instead of it: the answer is lost, the transaction exists.
        case createThenRespond(status: Int)
    }

    package struct Transaction: Sendable {
        package var id: String
        package var body: [String: String]
        package var customData: [String: String]
        package var createdAt: Int64
        package var status: String
    }

    private final class Shared: Sendable {
        let script = Mutex<[Behavior]>([])
        let transactions = Mutex<[Transaction]>([])
        let requests = Mutex<[String]>([])
        let country = Mutex<String>("US")
        let readRefusal = Mutex<Int?>(nil)
    }

    package let apiKey: String
    package let port: Int
    private let server: HTTPServer
    private let shared = Shared()

    package init(apiKey: String = "pdl_sdbx_apikey_01fake_0123456789abcdef") throws {
        self.apiKey = apiKey
        var configuration = HTTPServer.Configuration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.eventLoopCount = 1
        configuration.workerThreads = 2
        let shared = self.shared
        var router = Router()
        router.add("POST", "/transactions") { request in
            Self.answer(Self.create(request, shared: shared, apiKey: apiKey))
        }
        router.add("GET", "/transactions/{id}") { request in
            Self.answer(Self.read(request, shared: shared, apiKey: apiKey))
        }
        router.add("GET", "/transactions") { request in
            Self.answer(Self.list(request, shared: shared, apiKey: apiKey))
        }
        // A harmless read (`linkout check --online`): Paddle's event types, for the right key only.
        router.add("GET", "/event-types") { request in
            Self.answer(
                request.headers["authorization"] == "Bearer \(apiKey)"
                    ? (200, #"{"data":[{"name":"transaction.completed"}]}"#)
                    : (403, #"{"error":{"type":"request_error","code":"forbidden","detail":"invalid key"}}"#)
            )
        }
        server = HTTPServer(
            configuration: configuration,
            router: router,
            logger: Logger(label: "fake-paddle", level: .critical)
        )
        port = try server.start()
    }

    package var apiBase: String { "http://127.0.0.1:\(port)" }

    package func enqueue(_ behaviors: Behavior...) {
        shared.script.withLock { $0.append(contentsOf: behaviors) }
    }

    /// Every read of a transaction answers `status` from now on (a key without the permission: 403).
    package func refuseReads(status: Int) { shared.readRefusal.withLock { $0 = status } }

    /// The country of every transaction's address (ISO alpha-2).
    package func setCountry(_ code: String) { shared.country.withLock { $0 = code } }

    /// A transaction Paddle makes on its own (a renewal, a plan change's charge), readable by id afterwards.
    package func addTransaction(_ id: String, customData: [String: String] = [:]) {
        shared.transactions.withLock {
            $0.append(
                Transaction(
                    id: id,
                    body: [:],
                    customData: customData,
                    createdAt: Int64(Date().timeIntervalSince1970),
                    status: "completed"
                )
            )
        }
    }

    package var transactions: [Transaction] { shared.transactions.withLock { $0 } }
    /// `METHOD path?query` of every request, in order.
    package var requests: [String] { shared.requests.withLock { $0 } }

    package func stop() {
        server.shutdown(gracePeriod: .seconds(1))
    }

    /// A notification as Paddle delivers it: the `Paddle-Signature` header and the raw body.
    package static func signedDelivery(_ body: String, secret: String, timestamp: Int64) -> (
        header: String, body: [UInt8]
    ) {
        let bytes = Array(body.utf8)
        return (TimestampedHMAC.paddle(secret: secret).header(body: bytes, timestamp: timestamp), bytes)
    }

    private static func answer(_ result: (Int, String)) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json")
        if result.0 == 429 { headers.add(name: "Retry-After", value: "1") }
        return HTTPResponse(
            status: HTTPStatus(code: result.0, reasonPhrase: "Fake"),
            headers: headers,
            body: Array(result.1.utf8)
        )
    }

    private static func authorized(_ request: HTTPRequest, shared: Shared, apiKey: String) -> (Int, String)? {
        shared.requests.withLock { $0.append("\(request.method) \(request.target)") }
        guard request.headers["authorization"] == "Bearer \(apiKey)" else {
            // Echoing the header, as a proxy's or a careless server's error page may: linkout must mask it.
            let sent = request.headers["authorization"] ?? ""
            return (403, error("forbidden", "You aren't permitted to perform this request with \(sent)."))
        }
        guard request.headers["paddle-version"] == "1" else {
            return (400, error("invalid_field", "Paddle-Version 1 expected by this fake"))
        }
        return nil
    }

    private static func create(_ request: HTTPRequest, shared: Shared, apiKey: String) -> (Int, String) {
        if let refusal = authorized(request, shared: shared, apiKey: apiKey) { return refusal }
        let behavior = shared.script.withLock { $0.isEmpty ? Behavior.normal : $0.removeFirst() }
        if case .respond(let status, let body) = behavior {
            return (status, body.isEmpty ? error("scripted", "scripted \(status)") : body)
        }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any],
            let items = object["items"] as? [[String: Any]], items.count == 1, let item = items.first,
            item["quantity"] as? Int == 1, let custom = object["custom_data"] as? [String: String], !custom.isEmpty
        else { return (400, error("bad_request", "one item with quantity 1 and custom_data expected")) }
        var summary: [String: String] = ["currency_code": object["currency_code"] as? String ?? ""]
        if let priceId = item["price_id"] as? String {
            guard priceId.hasPrefix("pri_") else { return (400, error("invalid_field", "price_id")) }
            summary["price_id"] = priceId
        } else {
            guard let price = item["price"] as? [String: Any], let unit = price["unit_price"] as? [String: String],
                let amount = unit["amount"], Int64(amount) != nil, unit["currency_code"]?.count == 3,
                price["product"] != nil || price["product_id"] != nil
            else { return (400, error("invalid_field", "a non-catalog price needs unit_price and a product")) }
            summary["amount"] = amount
            if let cycle = price["billing_cycle"] as? [String: Any] {
                summary["billing_cycle"] = "\(cycle["frequency"] ?? "") \(cycle["interval"] ?? "")"
            }
        }
        let transaction = shared.transactions.withLock { list in
            let made = Transaction(
                id: "txn_01fake\(list.count + 1)",
                body: summary,
                customData: custom,
                createdAt: Int64(Date().timeIntervalSince1970),
                status: "ready"
            )
            list.append(made)
            return made
        }
        if case .createThenRespond(let status) = behavior {
            return (status, error("internal_error", "scripted \(status) after the work"))
        }
        return (201, #"{"data":\#(json(transaction, country: nil)),"meta":{"request_id":"fake"}}"#)
    }

    private static func read(_ request: HTTPRequest, shared: Shared, apiKey: String) -> (Int, String) {
        if let refusal = authorized(request, shared: shared, apiKey: apiKey) { return refusal }
        if let status = shared.readRefusal.withLock({ $0 }) {
            return (status, error("forbidden", "scripted \(status)"))
        }
        let id = request.pathParameters["id"] ?? ""
        guard let transaction = shared.transactions.withLock({ $0.first { $0.id == id } }) else {
            return (404, error("not_found", "Entity \(id) not found"))
        }
        let country = request.queryValue("include") == "address" ? shared.country.withLock { $0 } : nil
        return (200, #"{"data":\#(json(transaction, country: country)),"meta":{"request_id":"fake"}}"#)
    }

    private static func list(_ request: HTTPRequest, shared: Shared, apiKey: String) -> (Int, String) {
        if let refusal = authorized(request, shared: shared, apiKey: apiKey) { return refusal }
        let statuses = Set((request.queryValue("status") ?? "").split(separator: ",").map(String.init))
        let since = request.queryValue("created_at[GTE]").flatMap { PaddleTimestampForTests.seconds($0) }
        let found = shared.transactions.withLock { $0 }.filter { transaction in
            (statuses.isEmpty || statuses.contains(transaction.status))
                && (since.map { transaction.createdAt >= $0 } ?? true)
        }
        let data = found.reversed().map { json($0, country: nil) }.joined(separator: ",")
        return (
            200, #"{"data":[\#(data)],"meta":{"request_id":"fake","pagination":{"per_page":200,"has_more":false}}}"#
        )
    }

    private static func json(_ transaction: Transaction, country: String?) -> String {
        let currency = transaction.body["currency_code"] ?? "USD"
        let amount = transaction.body["amount"] ?? "0"
        var object: [String: Any] = [
            "id": transaction.id, "status": transaction.status, "origin": "api", "currency_code": currency,
            "custom_data": transaction.customData, "customer_id": NSNull(), "address_id": NSNull(),
            "subscription_id": NSNull(), "billing_period": NSNull(),
            "checkout": ["url": "https://pay.example.com/?_ptxn=\(transaction.id)"],
            "details": [
                "totals": [
                    "subtotal": amount, "tax": "0", "total": amount, "grand_total": amount, "grand_total_tax": "0",
                    "currency_code": currency,
                ]
            ],
        ]
        if let country { object["address"] = ["id": "add_01fake", "country_code": country] }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    private static func error(_ code: String, _ detail: String) -> String {
        let body: [String: Any] = ["error": ["type": "request_error", "code": code, "detail": detail]]
        let data = (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}

/// `2026-05-02T10:18:49Z` → UNIX seconds, for the list filter.
enum PaddleTimestampForTests {
    static func seconds(_ text: String) -> Int64? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text).map { Int64($0.timeIntervalSince1970) }
    }
}
