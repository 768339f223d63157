import Foundation
import HTTPServer
import Logging
import Outbound
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The libcurl client against real local servers.
@Suite("HTTPClient")
struct HTTPClientTests {
    /// A local HTTP server (our own core) that echoes what it received.
    final class EchoServer {
        let server: HTTPServer
        let port: Int

        init() throws {
            var configuration = HTTPServer.Configuration()
            configuration.host = "127.0.0.1"
            configuration.port = 0
            configuration.eventLoopCount = 1
            var router = Router()
            router.add("PUT", "/echo") { request in
                HTTPResponse(
                    status: HTTPStatus(code: 201, reasonPhrase: "Created"),
                    headers: ["X-Seen-Auth": request.headers["authorization"] ?? "", "X-Method": request.method],
                    body: request.body
                )
            }
            router.get("/slow") { _ in
                usleep(3_000_000)  // simulated slow upstream, longer than the client's timeout
                return .text("late")
            }
            server = HTTPServer(
                configuration: configuration,
                router: router,
                logger: Logger(label: "t", level: .critical)
            )
            port = try server.start()
        }

        deinit { server.shutdown(gracePeriod: .seconds(1)) }
    }

    @Test func sendsMethodHeadersAndBodyAndReadsTheAnswer() throws {
        let echo = try EchoServer()
        let client = HTTPClient()
        let body = Array(String(repeating: "report ", count: 400).utf8)  // over 1 KiB: no 100-continue stall
        let response = try client.perform(
            HTTPClientRequest(
                method: "PUT",
                url: "http://127.0.0.1:\(echo.port)/echo",
                headers: [("Authorization", "Bearer abc"), ("Content-Type", "application/json")],
                body: body
            )
        )
        #expect(response.status == 201)
        #expect(response.body == body)
        #expect(response.header("x-seen-auth") == "Bearer abc")
        #expect(response.header("X-Method") == "PUT")
    }

    /// An answer longer than `maxResponseBytes` fails the request once the limit is passed, and the handle serves
    /// the next request.
    @Test func aResponseOverTheLimitFailsTheRequest() throws {
        let echo = try EchoServer()
        var configuration = HTTPClient.Configuration()
        configuration.maxResponseBytes = 64 << 10
        configuration.poolSize = 1
        let client = HTTPClient(configuration: configuration)
        let url = "http://127.0.0.1:\(echo.port)/echo"
        #expect {
            try client.perform(HTTPClientRequest(method: "PUT", url: url, body: Array(repeating: 0x61, count: 65_537)))
        } throws: { error in
            (error as? HTTPClientError)?.message.contains("larger than 65536 bytes") == true
        }
        let atTheLimit = try client.perform(
            HTTPClientRequest(method: "PUT", url: url, body: Array(repeating: 0x61, count: 65_536))
        )
        #expect(atTheLimit.status == 201 && atTheLimit.body.count == 65_536)
    }

    /// A caller that reads only the status gets it whatever the body's size, and the handle serves the next
    /// request.
    @Test func aStatusOnlyRequestIsNotFailedByALargeAnswer() throws {
        let echo = try EchoServer()
        var configuration = HTTPClient.Configuration()
        configuration.maxResponseBytes = 64 << 10
        configuration.readsStatusOnly = true
        configuration.poolSize = 1
        let client = HTTPClient(configuration: configuration)
        let url = "http://127.0.0.1:\(echo.port)/echo"
        for size in [1 << 20, 0, 10] {
            let response = try client.perform(
                HTTPClientRequest(method: "PUT", url: url, body: Array(repeating: 0x61, count: size))
            )
            #expect(response.status == 201 && response.body.isEmpty, "\(size)")
            #expect(response.header("X-Method") == "PUT")
        }
    }

    @Test func pooledHandlesReuseTheirConnection() throws {
        let echo = try EchoServer()
        let client = HTTPClient()
        for _ in 0..<5 {
            let response = try client.perform(
                HTTPClientRequest(method: "PUT", url: "http://127.0.0.1:\(echo.port)/echo", body: Array("x".utf8))
            )
            #expect(response.status == 201)
        }
        #expect(echo.server.openConnections == 1)
    }

    @Test func timeoutsAndRefusedConnectionsAreErrorsNotHangs() throws {
        let echo = try EchoServer()
        var configuration = HTTPClient.Configuration()
        configuration.totalTimeout = .milliseconds(500)
        let client = HTTPClient(configuration: configuration)
        let started = Date()
        #expect {
            try client.perform(HTTPClientRequest(method: "GET", url: "http://127.0.0.1:\(echo.port)/slow"))
        } throws: { error in
            (error as? HTTPClientError)?.kind == .timedOut
        }
        #expect(Date().timeIntervalSince(started) < 2.5)
        #expect {
            try client.perform(HTTPClientRequest(method: "GET", url: "http://127.0.0.1:1/"))
        } throws: { error in
            (error as? HTTPClientError)?.kind == .connectionFailed
        }
    }

    /// TLS verification is always on: a server with a self-signed certificate is refused unless its CA is the
    /// configured `caFile`.
    @Test func tlsIsVerifiedAgainstTheConfiguredCA() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-tls-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let cert = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        try run(
            "/usr/bin/env",
            [
                "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                key, "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
            ]
        )
        let stub = try TLSStub(cert: cert, key: key)
        defer { stub.stop() }
        let port = stub.port
        let url = "https://127.0.0.1:\(port)/"

        #expect {
            try HTTPClient().perform(HTTPClientRequest(method: "GET", url: url))
        } throws: { error in
            (error as? HTTPClientError)?.kind == .tls
        }
        var trusting = HTTPClient.Configuration()
        trusting.caFile = cert
        let response = try HTTPClient(configuration: trusting).perform(HTTPClientRequest(method: "GET", url: url))
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "secure")
        stub.stop()
        #expect(TLSStub.isGone(stub.pid), "the TLS stub (pid \(stub.pid)) outlived its test")
    }

    /// A python3 TLS server on 127.0.0.1. Whatever starts `python3` (a version manager's shim may fork rather
    /// than exec), the server reports its own pid, and `stop()` ends that process; it also exits by itself when
    /// its stdin closes, so it cannot outlive a test process that crashed or was killed.
    final class TLSStub {
        let process: ChildProcess
        let input = Pipe()
        let port: Int
        let pid: pid_t
        private var stopped = false

        init(cert: String, key: String) throws {
            let output = Pipe()
            process = try ChildProcess(
                "/usr/bin/env",
                ["python3", "-c", HTTPClientTests.tlsStub, cert, key],
                input: input.fileHandleForReading.fileDescriptor,
                output: output.fileHandleForWriting.fileDescriptor
            )
            try input.fileHandleForReading.close()
            try output.fileHandleForWriting.close()
            // The first line is "PORT PID"; a stub that dies first gives an empty line and fails the test here.
            var bytes: [UInt8] = []
            while !bytes.contains(10) {
                // Blocks until the stub writes or exits (EOF: an empty read), so this loop ends either way.
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                bytes.append(contentsOf: chunk)
            }
            let line = String(decoding: bytes, as: UTF8.self)
            let fields = line.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            guard fields.count == 2, let port = Int(fields[0]), let pid = pid_t(fields[1]) else {
                process.signal(SIGTERM)
                process.waitForExit()
                Issue.record("the TLS stub printed \(line.debugDescription) instead of its port and pid")
                throw CocoaError(.fileReadCorruptFile)
            }
            self.port = port
            self.pid = pid
        }

        /// Ends the server and waits (bounded) until it is gone. Safe to call more than once.
        func stop() {
            // Once stopped, the pid may belong to someone else: never signal it again.
            guard !stopped else { return }
            stopped = true
            try? input.fileHandleForWriting.close()
            kill(pid, SIGKILL)
            if process.isRunning { process.signal(SIGTERM) }
            let deadline = Date() + 5
            while !Self.isGone(pid), Date() < deadline { usleep(10_000) }
            if !process.isRunning { process.waitForExit() }
        }

        deinit { stop() }

        /// True when `pid` no longer runs (gone, or a zombie waiting to be reaped).
        static func isGone(_ pid: pid_t) -> Bool {
            guard kill(pid, 0) == 0 else { return errno == ESRCH }
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
            // The state follows the parenthesised command name.
            guard let close = stat.lastIndex(of: ")") else { return true }
            return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
        }
    }

    static let tlsStub = """
        import http.server, os, signal, ssl, sys, threading
        # The test process may block signals, and a child inherits that mask: unblock them so SIGTERM works.
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = b"secure"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def log_message(self, *args):
                pass
        server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[1], sys.argv[2])
        server.socket = context.wrap_socket(server.socket, server_side=True)
        def exit_when_stdin_closes():
            sys.stdin.buffer.read()
            os._exit(0)
        threading.Thread(target=exit_when_stdin_closes, daemon=True).start()
        print(server.server_address[1], os.getpid(), flush=True)
        server.serve_forever()
        """

    private func run(_ executable: String, _ arguments: [String]) throws {
        #expect(try ChildProcess(executable, arguments).waitForExit() == 0)
    }
}
