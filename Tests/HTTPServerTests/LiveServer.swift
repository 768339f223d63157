import Dispatch
import Foundation
import HTTPServer
import Logging
import Synchronization
import TestSupport

/// A real server on 127.0.0.1 with a kernel-chosen port and a few routes that exercise the core.
final class LiveServer: Sendable {
    let server: HTTPServer
    let port: Int
    let host: String
    /// Signalled each time `/slow` starts running, so tests know a request is in flight without guessing.
    let slowEntered = DispatchSemaphore(value: 0)
    /// `/gate` holds its event loop (a handler that blocks where it must not) until `openGate()`, so a test can
    /// queue work on sockets the loop has not looked at yet. Signalled when the loop is held.
    let gateEntered = DispatchSemaphore(value: 0)
    private let gate = DispatchSemaphore(value: 0)
    /// Requests `/count` has answered; `/probe` reports it.
    let counted = Counter()

    /// A shareable atomic count (an `Atomic` itself cannot be captured by the route closures).
    final class Counter: Sendable {
        private let value = Atomic<Int>(0)
        func increment() { value.add(1, ordering: .relaxed) }
        var count: Int { value.load(ordering: .relaxed) }
    }

    init(host: String = "127.0.0.1", configure: (inout HTTPServer.Configuration) -> Void = { _ in }) throws {
        self.host = host
        var configuration = HTTPServer.Configuration()
        configuration.host = host
        configuration.port = 0
        configuration.eventLoopCount = 2
        configuration.workerThreads = 8
        configure(&configuration)
        let entered = slowEntered
        let gateEntered = gateEntered
        let gate = gate
        let counted = counted
        var router = Router()
        router.get("/hello", execution: .eventLoop) { _ in .text("hello") }
        router.get("/worker") { request in .text("worker " + (request.queryValue("n") ?? "")) }
        router.post("/echo") { request in
            HTTPResponse(status: .ok, headers: ["X-Body-Length": "\(request.body.count)"], body: request.body)
        }
        router.post("/small", bodyLimit: .upTo(1024)) { request in
            HTTPResponse(status: .ok, headers: ["X-Body-Length": "\(request.body.count)"], body: request.body)
        }
        router.get("/slow") { request in
            entered.signal()
            let milliseconds = UInt32(request.queryValue("ms") ?? "300") ?? 300
            usleep(milliseconds * 1000)  // simulated slow work (a database or payment call), not a wait for a race
            return .text("slow done")
        }
        router.get("/big", execution: .eventLoop) { _ in
            HTTPResponse(status: .ok, body: [UInt8](repeating: 65, count: 4 << 20))
        }
        router.get("/page", execution: .eventLoop) { _ in
            HTTPResponse(status: .ok, headers: ["Content-Type": "text/html"], body: [UInt8](repeating: 66, count: 8192))
        }
        router.get("/json", execution: .eventLoop) { _ in
            HTTPResponse(status: .ok, headers: ["Content-Type": "application/json"], body: Array("{}".utf8))
        }
        router.get("/count", execution: .eventLoop) { _ in
            counted.increment()
            return .text("ok")
        }
        router.get("/probe", execution: .eventLoop) { _ in
            .text(String(counted.count))
        }
        router.get("/gate", execution: .eventLoop) { _ in
            gateEntered.signal()
            // Bounded, so a failing test can never hold the loop forever.
            _ = gate.wait(timeout: .now() + 20)
            return .text("gate open")
        }
        router.get("/fail") { _ in throw HTTPError(.unprocessableContent, "nope") }
        router.get("/refuse") { _ in throw LanguageRefusal() }
        router.get("/busy") { _ in throw OutOfRoom(retryAfterSeconds: 30) }
        router.get("/broken") { _ in throw OutOfRoom(retryAfterSeconds: nil) }
        server = HTTPServer(
            configuration: configuration,
            router: router,
            logger: Logger(label: "test", level: .critical)
        )
        port = try server.start()
    }

    /// Lets a held `/gate` request finish. Safe to call when nothing is held.
    func openGate() {
        gate.signal()
    }

    func client(timeout: Int = 5) throws -> RawClient {
        try RawClient(host: host, port: port, timeout: timeout)
    }

    deinit {
        server.shutdown(gracePeriod: .seconds(1))
    }
}

/// An error that answers in the language the request asks for.
private struct LanguageRefusal: HTTPResponseError {
    var status: HTTPStatus { .conflict }

    func response(to request: HTTPRequest) -> HTTPResponse {
        .text("refused in \(request.headers["accept-language"] ?? "none")\n", status: status)
    }
}

/// A resource the server lacks for now (a full disk), or, with no `retryAfterSeconds`, a plain failure.
private struct OutOfRoom: TemporaryUnavailability {
    var retryAfterSeconds: Int?
}
