import Crypto
import Dispatch
import Foundation
import HTTPServer
import Logging
import Payments
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A stand-in for Stripe's `POST /v1/checkout/sessions` on 127.0.0.1, reached through the real libcurl client. It
/// checks each request as Stripe would (bearer secret key, `Idempotency-Key`, form fields: required ones, lowercase
/// currency, integer `unit_amount`, mode-specific parameters), creates session objects, replays the stored answer for a
/// repeated `Idempotency-Key` (Stripe API reference: Idempotent requests), and can be scripted to answer 500, 429, or
/// anything else first. It also signs webhook deliveries for tests of the receiving side.
package final class FakeStripeServer: Sendable {
    package enum Behavior: Sendable {
        /// Answer like Stripe (validate, create or replay).
        case normal
        /// Answer this instead, before the endpoint "executes", so nothing is stored under the key.
        case respond(status: Int, headers: [String: String] = [:], body: String = "")
        /// Answer like Stripe after this long (a slow call other requests meet while it is under way).
        case slow(milliseconds: Int)
        /// Answer like Stripe once the test calls `release` (a provider as slow as a test needs it to be).
        case held
    }

    package struct Received: Sendable {
        package var authorization: String
        package var idempotencyKey: String?
        package var stripeVersion: String?
        package var contentType: String?
        package var fields: [String: String]
        package var status: Int
    }

    /// What the handler shares with the test.
    private final class Shared: Sendable {
        let script = Mutex<[Behavior]>([])
        let log = Mutex<[Received]>([])
        /// Idempotency-Key → (the parameters, the stored answer).
        let stored = Mutex<[String: (fields: [String: String], status: Int, body: String)]>([:])
        let created = Mutex<Int>(0)
        let gate = DispatchSemaphore(value: 0)
        let holding = Mutex<Int>(0)
    }

    package let secretKey: String
    package let port: Int
    private let server: HTTPServer
    private let shared = Shared()

    package init(secretKey: String = "sk_test_fake_0123456789abcdef") throws {
        self.secretKey = secretKey
        var configuration = HTTPServer.Configuration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.eventLoopCount = 1
        configuration.workerThreads = 2
        let shared = self.shared
        var router = Router()
        router.add("POST", "/v1/checkout/sessions") { request in
            let (status, headers, body) = Self.answer(request, shared: shared, secretKey: secretKey)
            var fields = HTTPHeaders()
            for (name, value) in headers { fields.add(name: name, value: value) }
            fields.add(name: "Content-Type", value: "application/json")
            return HTTPResponse(
                status: HTTPStatus(code: status, reasonPhrase: "Fake"),
                headers: fields,
                body: Array(body.utf8)
            )
        }
        // A harmless read (`linkout check --online`): the balance, for the right key only.
        router.add("GET", "/v1/balance") { request in
            let known = request.headers["authorization"] == "Bearer \(secretKey)"
            return HTTPResponse(
                status: HTTPStatus(code: known ? 200 : 401, reasonPhrase: "Fake"),
                headers: ["Content-Type": "application/json"],
                body: Array(
                    (known
                        ? #"{"object":"balance","available":[],"pending":[]}"#
                        : Self.error("invalid_request_error", "Invalid API Key provided")).utf8
                )
            )
        }
        server = HTTPServer(
            configuration: configuration,
            router: router,
            logger: Logger(label: "fake-stripe", level: .critical)
        )
        port = try server.start()
    }

    package var apiBase: String { "http://127.0.0.1:\(port)" }

    package func enqueue(_ behaviors: Behavior...) {
        shared.script.withLock { $0.append(contentsOf: behaviors) }
    }

    package var received: [Received] { shared.log.withLock { $0 } }
    package var sessionsCreated: Int { shared.created.withLock { $0 } }

    /// Requests waiting under `.held` now.
    package var held: Int { shared.holding.withLock { $0 } }

    /// Lets `count` held requests answer.
    package func release(_ count: Int) {
        for _ in 0..<count { shared.gate.signal() }
    }

    package func stop() {
        release(shared.holding.withLock { $0 })
        server.shutdown(gracePeriod: .seconds(1))
    }

    /// A webhook delivery as Stripe sends it: the `Stripe-Signature` header and the raw body.
    package static func signedDelivery(event: String, secret: String, timestamp: Int64) -> (
        header: String, body: [UInt8]
    ) {
        let body = Array(event.utf8)
        return (TimestampedHMAC.stripe(secret: secret).header(body: body, timestamp: timestamp), body)
    }

    private static func answer(_ request: HTTPRequest, shared: Shared, secretKey: String) -> (
        Int, [String: String], String
    ) {
        let pairs = FormDecoding.items(Substring(String(decoding: request.body, as: UTF8.self)))
        var fields: [String: String] = [:]
        for pair in pairs { fields[pair.name] = pair.value }
        let behavior = shared.script.withLock { $0.isEmpty ? Behavior.normal : $0.removeFirst() }
        let result: (Int, [String: String], String)
        switch behavior {
        case .respond(let status, let headers, let body):
            result = (status, headers, body.isEmpty ? error("api_error", "scripted \(status)") : body)
        case .normal:
            result = respond(request, fields: fields, shared: shared, secretKey: secretKey)
        case .slow(let milliseconds):
            usleep(useconds_t(milliseconds * 1000))
            result = respond(request, fields: fields, shared: shared, secretKey: secretKey)
        case .held:
            shared.holding.withLock { $0 += 1 }
            shared.gate.wait()
            shared.holding.withLock { $0 -= 1 }
            result = respond(request, fields: fields, shared: shared, secretKey: secretKey)
        }
        shared.log.withLock {
            $0.append(
                Received(
                    authorization: request.headers["authorization"] ?? "",
                    idempotencyKey: request.headers["idempotency-key"],
                    stripeVersion: request.headers["stripe-version"],
                    contentType: request.headers["content-type"],
                    fields: fields,
                    status: result.0
                )
            )
        }
        return result
    }

    private static func respond(_ request: HTTPRequest, fields: [String: String], shared: Shared, secretKey: String)
        -> (Int, [String: String], String)
    {
        // Stripe checks the key and rate limits before idempotency (Stripe API reference: Idempotent requests): nothing
        // is stored for these.
        guard request.headers["authorization"] == "Bearer \(secretKey)" else {
            // Echoes the key it got, so tests can prove the client never lets it into an error message.
            let given = request.headers["authorization"] ?? ""
            return (401, [:], error("invalid_request_error", "Invalid API Key provided: \(given)"))
        }
        guard let key = request.headers["idempotency-key"], !key.isEmpty else {
            return (400, [:], error("invalid_request_error", "this fake wants an Idempotency-Key"))
        }
        if let stored = shared.stored.withLock({ $0[key] }) {
            guard stored.fields == fields else {
                return (
                    400, [:],
                    error("idempotency_error", "Keys for idempotent requests can only be used with the same parameters")
                )
            }
            return (stored.status, ["Idempotent-Replayed": "true"], stored.body)
        }
        let (status, body) = validateAndCreate(fields, shared: shared)
        shared.stored.withLock { $0[key] = (fields, status, body) }
        return (status, [:], body)
    }

    private static func validateAndCreate(_ fields: [String: String], shared: Shared) -> (Int, String) {
        func invalid(_ param: String, _ message: String) -> (Int, String) {
            (400, error("invalid_request_error", message, param: param))
        }
        let item = "line_items[0]"
        let price = "\(item)[price_data]"
        guard let mode = fields["mode"], mode == "payment" || mode == "subscription" else {
            return invalid("mode", "mode must be payment or subscription")
        }
        guard let currency = fields["\(price)[currency]"], currency.count == 3,
            currency.allSatisfy({ $0.isLowercase && $0.isLetter })
        else { return invalid("\(price)[currency]", "currency must be a lowercase ISO code") }
        guard let amountText = fields["\(price)[unit_amount]"], let amount = Int64(amountText), amount >= 0,
            !amountText.contains("."), amountText.count <= 8
        else { return invalid("\(price)[unit_amount]", "unit_amount must be an integer in minor units") }
        guard let name = fields["\(price)[product_data][name]"], !name.isEmpty else {
            return invalid("\(price)[product_data][name]", "product_data[name] is required")
        }
        guard fields["\(item)[quantity]"].flatMap({ Int($0) }).map({ $0 >= 1 }) == true else {
            return invalid("\(item)[quantity]", "quantity must be a positive integer")
        }
        guard let success = fields["success_url"], success.hasPrefix("http") else {
            return invalid("success_url", "success_url is required")
        }
        let recurring = fields["\(price)[recurring][interval]"]
        if mode == "subscription" {
            guard let recurring, ["day", "week", "month", "year"].contains(recurring) else {
                return invalid("\(price)[recurring][interval]", "subscription mode needs a recurring price")
            }
            if fields.keys.contains(where: { $0.hasPrefix("payment_intent_data") }) {
                return invalid("payment_intent_data", "payment_intent_data is only for payment mode")
            }
        } else {
            if recurring != nil { return invalid("\(price)[recurring]", "payment mode takes no recurring price") }
            if fields.keys.contains(where: { $0.hasPrefix("subscription_data") }) {
                return invalid("subscription_data", "subscription_data is only for subscription mode")
            }
        }
        let number = shared.created.withLock {
            $0 += 1
            return $0
        }
        let id = "cs_test_fake\(number)"
        let session: [String: Any] = [
            "id": id,
            "object": "checkout.session",
            "url": "https://checkout.stripe.com/c/pay/\(id)",
            "mode": mode,
            "status": "open",
            "payment_status": "unpaid",
            "currency": currency,
            "amount_subtotal": amount,
            "amount_total": amount,
            "client_reference_id": fields["client_reference_id"] ?? NSNull(),
            "livemode": false,
        ]
        let data = (try? JSONSerialization.data(withJSONObject: session, options: [.sortedKeys])) ?? Data()
        return (200, String(decoding: data, as: UTF8.self))
    }

    private static func error(_ type: String, _ message: String, param: String? = nil) -> String {
        var error: [String: Any] = ["type": type, "message": message]
        if let param { error["param"] = param }
        let data = (try? JSONSerialization.data(withJSONObject: ["error": error], options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
