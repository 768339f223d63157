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

    init(host: String = "127.0.0.1", configure: (inout HTTPServer.Configuration) -> Void = { _ in }) throws {
        self.host = host
        var configuration = HTTPServer.Configuration()
        configuration.host = host
        configuration.port = 0
        configuration.eventLoopCount = 2
        configuration.workerThreads = 8
        configure(&configuration)
        let entered = slowEntered
        var router = Router()
        router.get("/hello", execution: .eventLoop) { _ in .text("hello") }
        router.get("/worker") { request in .text("worker " + (request.queryValue("n") ?? "")) }
        router.post("/echo") { request in
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
        router.get("/fail") { _ in throw HTTPError(.unprocessableContent, "nope") }
        server = HTTPServer(
            configuration: configuration,
            router: router,
            logger: Logger(label: "test", level: .critical)
        )
        port = try server.start()
    }

    func client(timeout: Int = 5) throws -> RawClient {
        try RawClient(host: host, port: port, timeout: timeout)
    }

    deinit {
        server.shutdown(gracePeriod: .seconds(1))
    }
}
