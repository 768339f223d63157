import Crypto
import Dispatch
import Foundation
import HTTPServer
import Logging
import Synchronization

/// The developer's backend as a test sees it: an HTTP server on 127.0.0.1 that checks each entitlement event's
/// signature the way the README tells receivers to, records what it got, and can be told to fail first.
final class WebhookReceiver: Sendable {
    struct Delivery: Sendable {
        var eventId: String
        var type: String
        var body: [UInt8]
        var signatureValid: Bool
        var answered: Int
    }

    private final class Shared: Sendable {
        let failuresLeft = Mutex(0)
        let log = Mutex<[Delivery]>([])
        /// How many of the first requests are still to be held (not answered) until `release`, and how many are
        /// being held now.
        let hold = Mutex((first: 0, holding: 0))
        let released = DispatchSemaphore(value: 0)
    }

    let secret: String
    let port: Int
    private let server: HTTPServer
    private let shared = Shared()

    /// `failFirst`: the first requests answered `failStatus` (with `Retry-After: retryAfter` when given);
    /// `holdFirst`: the first requests answered only once `release` is called, the others meanwhile as usual.
    init(
        secret: String,
        failFirst: Int = 0,
        failStatus: Int = 500,
        retryAfter: String? = nil,
        holdFirst: Int = 0
    ) throws {
        self.secret = secret
        shared.failuresLeft.withLock { $0 = failFirst }
        shared.hold.withLock { $0.first = holdFirst }
        var configuration = HTTPServer.Configuration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.eventLoopCount = 1
        // Held requests keep their threads: room for them and for the requests answered meanwhile.
        configuration.workerThreads = holdFirst + 2
        let shared = self.shared
        var router = Router()
        router.post("/hooks") { request in
            let held = shared.hold.withLock { hold in
                guard hold.first > 0 else { return false }
                hold.first -= 1
                hold.holding += 1
                return true
            }
            if held {
                // Until `release` (which `stop` calls too).
                shared.released.wait()
                shared.hold.withLock { $0.holding -= 1 }
            }
            let valid = Self.verify(request.headers["linkout-signature"], body: request.body, secret: secret)
            let fail = shared.failuresLeft.withLock { left in
                defer { left = max(0, left - 1) }
                return left > 0
            }
            let status = fail ? failStatus : (valid ? 200 : 400)
            shared.log.withLock {
                $0.append(
                    Delivery(
                        eventId: request.headers["linkout-event-id"] ?? "",
                        type: request.headers["linkout-event-type"] ?? "",
                        body: request.body,
                        signatureValid: valid,
                        answered: status
                    )
                )
            }
            var headers = HTTPHeaders()
            if fail, let retryAfter { headers.add(name: "Retry-After", value: retryAfter) }
            return HTTPResponse(status: HTTPStatus(code: status, reasonPhrase: "Test"), headers: headers, body: [])
        }
        server = HTTPServer(
            configuration: configuration,
            router: router,
            logger: Logger(label: "receiver", level: .critical)
        )
        port = try server.start()
    }

    var url: String { "http://127.0.0.1:\(port)/hooks" }
    /// How many requests are being held (`holdFirst`).
    var holding: Int { shared.hold.withLock { $0.holding } }

    /// Answers the held requests.
    func release() {
        for _ in 0..<max(1, holding) { shared.released.signal() }
    }
    var deliveries: [Delivery] { shared.log.withLock { $0 } }

    /// Waits (bounded) until `count` deliveries were answered 2xx.
    func waitForAccepted(_ count: Int, seconds: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while deliveries.filter({ $0.answered == 200 }).count < count {
            guard Date() < deadline else { return false }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return true
    }

    /// `t=<seconds>,v1=<hex>`: HMAC-SHA256 of "t.body" with the shared secret. A real receiver refuses
    /// timestamps more than five minutes off; the tests move the application's clock hours ahead, so this one
    /// allows a day.
    static func verify(_ header: String?, body: [UInt8], secret: String) -> Bool {
        guard let header else { return false }
        var timestamp: Int64?
        var signatures: [String] = []
        for part in header.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else { continue }
            if pair[0] == "t" { timestamp = Int64(pair[1]) }
            if pair[0] == "v1" { signatures.append(pair[1]) }
        }
        guard let timestamp, abs(Int64(Date().timeIntervalSince1970) - timestamp) < 86_400 else { return false }
        let mac = HMACSHA256(key: Array(secret.utf8)).authenticate(bytes: Array("\(timestamp).".utf8) + body)
        let expected = mac.map { String(format: "%02x", $0) }.joined()
        return signatures.contains { HMACSHA256.constantTimeEqual(Array($0.utf8), Array(expected.utf8)) }
    }

    func stop() {
        release()
        server.shutdown(gracePeriod: .seconds(1))
    }
}
