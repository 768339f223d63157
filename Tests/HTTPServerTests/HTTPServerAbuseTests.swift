import Dispatch
import Foundation
import HTTPServer
import Logging
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Clients that push the server hard: deep pipelines, floods beside a newcomer, many connections from one address,
/// connections that never speak. Each test bounds its own duration: reads give up after a few seconds.
@Suite("HTTPServer under abuse")
struct HTTPServerAbuseTests {
    @Test func aThousandPipelinedRequestsInOneWriteAreAllAnswered() throws {
        let live = try LiveServer()
        let client = try live.client()
        client.send(String(repeating: "GET /page HTTP/1.1\r\nHost: t\r\n\r\n", count: 1000))
        let deadline = Date() + 30
        var answered = 0
        // Each read gives up after 5 s, so a connection that stops being served fails here instead of hanging.
        while answered < 1000, Date() < deadline {
            let response = try client.readResponse()
            guard response.status == 200, response.body.count == 8192 else {
                Issue.record("response \(answered) was \(response.status) with \(response.body.count) bytes")
                return
            }
            answered += 1
        }
        #expect(answered == 1000)
        #expect(try client.roundTrip("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n").text == "hello")
    }

    /// One loop, held by `/gate` while 50 clients each queue 500 pipelined requests and a newcomer queues one. When
    /// the loop resumes, every socket is ready at once; the newcomer must not wait for all 25,000 to be served.
    @Test func aNewcomerIsServedBeforeAPipelinedFloodIsFinished() throws {
        let live = try LiveServer {
            $0.eventLoopCount = 1
        }
        defer { live.openGate() }
        let holder = try live.client()
        holder.send("GET /gate HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(live.gateEntered.wait(timeout: .now() + 10) == .success)

        let connections = 50
        let pipelined = 500
        let flood = try (0..<connections).map { _ in try live.client(timeout: 20) }
        let pipeline = String(repeating: "GET /count HTTP/1.1\r\nHost: t\r\n\r\n", count: pipelined)
        for client in flood { client.send(pipeline) }
        let newcomer = try live.client(timeout: 20)
        newcomer.send("GET /probe HTTP/1.1\r\nHost: t\r\n\r\n")
        live.openGate()

        let probe = try newcomer.readResponse()
        #expect(probe.status == 200)
        let servedBeforeNewcomer = Int(probe.text) ?? -1
        #expect(servedBeforeNewcomer >= 0)
        #expect(servedBeforeNewcomer < connections * pipelined)
        #expect(try holder.readResponse().text == "gate open")
        for client in flood {
            for _ in 0..<pipelined { #expect(try client.readResponse().status == 200) }
        }
        #expect(live.counted.count == connections * pipelined)
    }

    /// A body nobody takes is answered when its head arrives: the client sends only the head and gets 405, 404 or
    /// 413 (never a 100 Continue), and the connection closes. Before, the server waited for the whole body first.
    @Test func aBodyNobodyTakesIsAnsweredBeforeItIsSent() throws {
        let live = try LiveServer()
        let cases = [
            ("POST /hello HTTP/1.1\r\nHost: t\r\nContent-Length: 1000000\r\n\r\n", 405),
            ("POST /nothing HTTP/1.1\r\nHost: t\r\nContent-Length: 1000000\r\n\r\n", 404),
            ("POST /small HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 1025\r\n\r\n", 413),
            ("GET /hello HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\n", 413),
        ]
        for (head, status) in cases {
            let client = try live.client()
            let response = try client.roundTrip(head)
            #expect(response.status == status, "\(head.prefix(12))")
            #expect(response.header("Connection") == "close")
            #expect(client.isClosedByServer())
        }
        let client = try live.client()
        let within = try client.roundTrip(
            "POST /small HTTP/1.1\r\nHost: t\r\nContent-Length: 1024\r\n\r\n" + String(repeating: "s", count: 1024)
        )
        #expect(within.header("X-Body-Length") == "1024")
    }

    /// A chunked body of many tiny chunks passes the limit through its framing and gets 413 at once. Before, the
    /// framing was free: the input filled up with little data and the client got a 408 at the body timeout.
    @Test func aChunkedBodyOfTinyChunksGets413Quickly() throws {
        let live = try LiveServer { $0.requestBodyTimeout = .seconds(20) }
        let client = try live.client(timeout: 10)
        let started = Date()
        client.send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
        // 1.2 MB of framing for 200 KB of data, under the server's 1 MiB limit.
        let chunks = String(repeating: "1\r\na\r\n", count: 10_000)
        for _ in 0..<20 { client.send(chunks) }
        let response = try client.readResponse()
        #expect(response.status == 413)
        #expect(Date().timeIntervalSince(started) < 5)
    }

    @Test func laterHTTP1MinorVersionsAreServedAsHTTP11() throws {
        let live = try LiveServer()
        let client = try live.client()
        let response = try client.roundTrip("GET /hello HTTP/1.2\r\nHost: t\r\n\r\n")
        #expect(response.status == 200)
        #expect(response.raw.hasPrefix("HTTP/1.1 200"))
        #expect(response.header("Connection") == "keep-alive")
        #expect(try client.roundTrip("GET /hello HTTP/1.9\r\nHost: t\r\n\r\n").text == "hello")
        let other = try live.client()
        let refused = try other.roundTrip("GET /hello HTTP/2.0\r\nHost: t\r\n\r\n")
        #expect(refused.status == 400 && refused.text.contains("Only HTTP/1.0 and HTTP/1.1 are supported."))
    }

    @Test func absoluteFormTargetsAreRoutedByTheirPath() throws {
        let live = try LiveServer()
        let client = try live.client()
        let hello = try client.roundTrip("GET http://example.com/hello HTTP/1.1\r\nHost: example.com\r\n\r\n")
        #expect(hello.status == 200)
        #expect(hello.text == "hello")
        let worker = try client.roundTrip("GET HTTPS://example.com:443/worker?n=7 HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(worker.text == "worker 7")
        #expect(try client.roundTrip("GET http://example.com HTTP/1.1\r\nHost: t\r\n\r\n").status == 404)
    }

    @Test func everyResponseTheCoreWritesForbidsSniffing() throws {
        let live = try LiveServer { $0.maxConnections = 1 }
        let client = try live.client()
        let requests = [
            "GET /json HTTP/1.1\r\nHost: t\r\n\r\n",
            "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n",
            "HEAD /hello HTTP/1.1\r\nHost: t\r\n\r\n",
            "GET /page HTTP/1.1\r\nHost: t\r\n\r\n",
            "GET /nothing HTTP/1.1\r\nHost: t\r\n\r\n",
            "DELETE /hello HTTP/1.1\r\nHost: t\r\n\r\n",
            "GET /fail HTTP/1.1\r\nHost: t\r\n\r\n",
        ]
        for request in requests {
            let response = try client.roundTrip(request)
            let values = response.headers.filter { $0.name.lowercased() == "x-content-type-options" }.map(\.value)
            #expect(values == ["nosniff"], "\(request.prefix(20)) → \(response.status)")
        }
        // Above the connection cap: the canned 503.
        let shed = try live.client().readResponse()
        #expect(shed.status == 503)
        #expect(shed.header("X-Content-Type-Options") == "nosniff")
        // A parser rejection.
        let rejected = try client.roundTrip("GET /hello HTTP/1.1\r\n\r\n")
        #expect(rejected.status == 400)
        #expect(rejected.header("X-Content-Type-Options") == "nosniff")
    }

    @Test func connectionsAboveThePerClientCapGet503AndTheRestAreServed() throws {
        let live = try LiveServer { $0.maxConnectionsPerClient = 3 }
        var clients = try (0..<3).map { _ in try live.client() }
        for client in clients { #expect(try client.roundTrip("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n").status == 200) }
        let excess = try live.client()
        let shed = try excess.readResponse()
        #expect(shed.status == 503)
        #expect(shed.header("Connection") == "close")
        #expect(excess.isClosedByServer())
        for client in clients { #expect(try client.roundTrip("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n").status == 200) }
        // A slot freed by a closing client is available again.
        clients.removeLast()
        let deadline = Date() + 10
        while live.server.openConnections > 2, Date() < deadline { usleep(1000) }
        #expect(live.server.openConnections == 2)
        let again = try live.client()
        #expect(try again.roundTrip("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n").status == 200)
    }

    @Test func aConnectionThatNeverSpeaksIsClosedSilentlyAfterTheFirstByteTimeout() throws {
        let live = try LiveServer {
            $0.firstByteTimeout = .milliseconds(300)
            $0.idleTimeout = .seconds(60)
        }
        let speaker = try live.client()
        #expect(try speaker.roundTrip("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n").status == 200)
        let silent = try live.client(timeout: 10)
        let started = Date()
        #expect(try silent.readToEnd() == "")
        #expect(Date().timeIntervalSince(started) < 5)
        // A connection that has spoken is held to the idle timeout, not the first-byte one.
        #expect(try speaker.roundTrip("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n").status == 200)
    }

    /// A 500's log line names the route's pattern: the path itself can be a secret (a checkout id).
    @Test func aFailingHandlersLogLineNamesTheRouteNotThePath() throws {
        struct Broken: Error {}
        let lines = Mutex<[String]>([])
        var router = Router()
        router.get("/checkout/{id}") { _ in throw Broken() }
        router.get("/inline/{id}", execution: .eventLoop) { _ in throw Broken() }
        var configuration = HTTPServer.Configuration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.eventLoopCount = 1
        configuration.workerThreads = 1
        let server = HTTPServer(
            configuration: configuration,
            router: router,
            logger: Logger(label: "test", level: .trace, sink: .init { line in lines.withLock { $0.append(line) } })
        )
        let port = try server.start()
        defer { server.shutdown(gracePeriod: .seconds(1)) }
        let client = try RawClient(port: port)
        #expect(try client.roundTrip("GET /checkout/s3cretcheckoutid HTTP/1.1\r\nHost: t\r\n\r\n").status == 500)
        #expect(try client.roundTrip("GET /inline/s3cretinline HTTP/1.1\r\nHost: t\r\n\r\n").status == 500)
        // The log is JSON, which writes `/` as `\/`.
        let failures = lines.withLock { $0 }.filter { $0.contains("handler failed") }.map {
            $0.replacingOccurrences(of: "\\/", with: "/")
        }
        #expect(failures.count == 2, "\(failures)")
        #expect(failures.contains { $0.contains(#""route":"/checkout/{id}""#) }, "\(failures)")
        #expect(failures.contains { $0.contains(#""route":"/inline/{id}""#) })
        #expect(!failures.contains { $0.contains("s3cret") }, "\(failures)")
    }
}
