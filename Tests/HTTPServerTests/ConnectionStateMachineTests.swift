import Foundation
import Testing

@testable import HTTPServer

/// The connection's protocol logic without a socket: bytes and events in, actions out.
@Suite("ConnectionStateMachine")
struct ConnectionStateMachineTests {
    /// Plays the event loop: performs the machine's actions against a pretend socket and records them.
    final class Harness {
        var machine: ConnectionStateMachine
        var now: UInt64 = 1_000_000_000
        let date = Array("Mon, 01 Jan 2024 00:00:00 GMT".utf8)
        /// Everything the socket took.
        var sent: [UInt8] = []
        /// How many more bytes the socket takes before it is full; nil for no limit.
        var room: Int?
        /// Answer dispatched requests at once (as an event-loop handler would), with the target as the body.
        var answerAtOnce = true
        var log: [String] = []

        init(
            router: Router = Harness.anyPath,
            configure: (inout HTTPServer.Configuration) -> Void = { _ in },
            adjust: (inout ConnectionStateMachine.Settings) -> Void = { _ in }
        ) {
            var configuration = HTTPServer.Configuration()
            configuration.idleTimeout = .seconds(60)
            configuration.requestHeadTimeout = .seconds(10)
            configuration.requestBodyTimeout = .seconds(30)
            configuration.writeTimeout = .seconds(30)
            configure(&configuration)
            var settings = ConnectionStateMachine.Settings(configuration: configuration, router: router)
            adjust(&settings)
            machine = ConnectionStateMachine(settings: settings, now: now)
        }

        /// Every path for GET, POST and PUT, bodies up to the server's limit: the machine only asks the router what
        /// a request's body may be, so these handlers never run.
        static let anyPath: Router = {
            var router = Router()
            for method in ["GET", "POST", "PUT"] {
                router.add(method, "/{path...}", bodyLimit: .serverLimit) { _ in .text("") }
            }
            return router
        }()

        var sentText: String { String(decoding: sent, as: UTF8.self) }

        func receive(_ text: String) {
            Array(text.utf8).withUnsafeBytes { machine.received($0, now: now) }
        }

        /// Performs actions until the machine waits, yields or closes; returns what it did this time.
        @discardableResult
        func run() -> [String] {
            var actions: [String] = []
            for _ in 0..<10_000 {
                switch machine.nextAction(now: now, date: date) {
                case .dispatch(let request):
                    actions.append("dispatch \(request.method) \(request.target)")
                    if answerAtOnce { respond(with: request.target) }
                case .rejected(let status):
                    actions.append("rejected \(status.code)")
                case .refuse(let request, let response):
                    actions.append("refuse \(response.status.code) \(request.method) \(request.target)")
                    machine.respond(response, requestID: "", date: date)
                case .write:
                    let count = machine.withPendingOutput { bytes in
                        let count = min(bytes.count, room ?? bytes.count)
                        sent.append(contentsOf: bytes.prefix(count))
                        return count
                    }
                    room = room.map { $0 - count }
                    machine.wrote(count, now: now)
                    if actions.last != "write" { actions.append("write") }
                case .shutdownWrite:
                    actions.append("shutdownWrite")
                case .closeUnlessUnread:
                    actions.append("closeUnlessUnread")
                    log += actions
                    return actions
                case .close:
                    actions.append("close")
                    log += actions
                    return actions
                case .yield:
                    actions.append("yield")
                    log += actions
                    return actions
                case .wait:
                    log += actions
                    return actions
                }
            }
            Issue.record("the machine never settled")
            return actions
        }

        func fireTimers() -> Bool {
            machine.timerFired(now: now, date: date)
        }

        func respond(with text: String) {
            machine.respond(.text(text), requestID: "", date: date)
        }
    }

    @Test func aRequestInPiecesIsDispatchedOnceCompleteAndAnswered() {
        let harness = Harness()
        harness.receive("GET /a HTTP/1.1\r\nHo")
        #expect(harness.run() == [])
        #expect(harness.machine.wantsRead)
        harness.receive("st: t\r\n\r\n")
        #expect(harness.run() == ["dispatch GET /a", "write"])
        #expect(harness.sentText.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(harness.sentText.contains("Connection: keep-alive\r\n"))
        #expect(harness.sentText.hasSuffix("\r\n\r\n/a"))
        #expect(harness.machine.isQuiescent)
    }

    @Test func pipelinedRequestsWaitForTheResponseBeforeThem() {
        let harness = Harness()
        harness.answerAtOnce = false
        harness.receive("GET /1 HTTP/1.1\r\nHost: t\r\n\r\nGET /2 HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(harness.run() == ["dispatch GET /1"])
        #expect(harness.run() == [])
        harness.respond(with: "one")
        #expect(harness.run() == ["dispatch GET /2", "write"])
        harness.respond(with: "two")
        #expect(harness.run() == ["write"])
        let text = harness.sentText
        let one = text.range(of: "one")
        let two = text.range(of: "two")
        #expect(one != nil && two != nil && one!.lowerBound < two!.lowerBound)
    }

    @Test func aMalformedRequestIsRefusedAndTheConnectionClosedAfterTheAnswer() {
        let harness = Harness()
        harness.receive("GET /a HTTP/1.1\r\nHost : t\r\n\r\nGET /b HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(harness.run() == ["rejected 400", "write", "shutdownWrite"])
        #expect(harness.sentText.hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
        #expect(harness.sentText.contains("Connection: close\r\n"))
        #expect(!harness.sentText.contains("/b"))
        // Lingering: input is discarded until the peer closes.
        harness.receive("more")
        #expect(harness.run() == [])
        harness.machine.receivedEndOfStream()
        #expect(harness.run() == ["close"])
    }

    @Test func connectionCloseEndsTheConnectionOnceTheResponseIsWritten() {
        let harness = Harness()
        harness.receive("GET /a HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        #expect(harness.run() == ["dispatch GET /a", "write", "closeUnlessUnread"])
        #expect(harness.sentText.contains("Connection: close\r\n"))
    }

    @Test func unreadBytesAtCloseMakeTheConnectionLingerThenClose() {
        let harness = Harness()
        harness.receive("GET /a HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        harness.run()
        harness.machine.linger(now: harness.now)
        #expect(harness.run() == ["shutdownWrite"])
        harness.now += 3_000_000_000
        #expect(harness.fireTimers())
        #expect(harness.run() == ["close"])
    }

    @Test func aSlowHeadGets408() {
        let harness = Harness()
        harness.receive("GET /a HTTP/1.1\r\n")
        harness.run()
        harness.now += 5_000_000_000
        #expect(!harness.fireTimers())
        harness.now += 6_000_000_000
        #expect(harness.fireTimers())
        #expect(harness.run() == ["rejected 408", "write", "closeUnlessUnread"])
        #expect(harness.sentText.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"))
    }

    @Test func anIdleConnectionClosesSilentlyAfterTheIdleTimeout() {
        let harness = Harness()
        harness.receive("GET /a HTTP/1.1\r\nHost: t\r\n\r\n")
        harness.run()
        let answered = harness.sent.count
        harness.now += 59_000_000_000
        #expect(!harness.fireTimers())
        harness.now += 2_000_000_000
        #expect(harness.fireTimers())
        #expect(harness.run() == ["close"])
        #expect(harness.sent.count == answered)
    }

    /// A client that closes its sending side part-way through a head or a body can still read why nothing came
    /// of it.
    @Test func endOfStreamPartWayThroughARequestIsAnswered400() {
        for partial in [
            "GET /a HTTP/1.1\r\nHost: t\r\n", "POST /a HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\n{\"to",
            "POST /a HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd",
        ] {
            let harness = Harness()
            harness.receive(partial)
            harness.run()
            harness.machine.receivedEndOfStream()
            #expect(harness.run() == ["rejected 400", "write", "close"], "\(partial)")
            #expect(harness.sentText.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(partial)")
            #expect(harness.sentText.contains(ConnectionStateMachine.cutShort), "\(partial)")
        }
    }

    @Test func endOfStreamAfterTheAnswersCloses() {
        let harness = Harness()
        harness.receive("GET /a HTTP/1.1\r\nHost: t\r\n\r\n")
        harness.machine.receivedEndOfStream()
        #expect(harness.run() == ["dispatch GET /a", "write", "close"])
        #expect(!harness.machine.wantsRead)
    }

    @Test func aFullSocketPausesWritingUntilItIsWritableAgain() {
        let harness = Harness()
        harness.room = 10
        harness.receive("GET /a HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(harness.run() == ["dispatch GET /a", "write"])
        #expect(harness.sent.count == 10)
        #expect(harness.machine.wantsWrite)
        #expect(harness.run() == [])
        harness.room = nil
        harness.machine.becameWritable()
        #expect(harness.run() == ["write"])
        #expect(!harness.machine.wantsWrite)
        #expect(harness.sentText.hasSuffix("/a"))
    }

    @Test func expectContinueGetsAnInterimResponse() {
        let harness = Harness()
        harness.receive("POST /e HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n")
        #expect(harness.run() == ["write"])
        #expect(harness.sentText == "HTTP/1.1 100 Continue\r\n\r\n")
        harness.receive("abc")
        #expect(harness.run() == ["dispatch POST /e", "write"])
    }

    @Test func drainingClosesIdleConnectionsAndAnswersInFlightOnesWithClose() {
        let idle = Harness()
        idle.receive("GET /a HTTP/1.1\r\nHost: t\r\n\r\n")
        idle.run()
        idle.machine.drain(date: Array("Thu, 01 Jan 1970 00:00:00 GMT".utf8))
        #expect(idle.run() == ["close"])

        let busy = Harness()
        busy.answerAtOnce = false
        busy.receive("GET /a HTTP/1.1\r\nHost: t\r\n\r\n")
        busy.run()
        busy.machine.drain(date: Array("Thu, 01 Jan 1970 00:00:00 GMT".utf8))
        #expect(busy.run() == [])
        busy.respond(with: "late")
        #expect(busy.run() == ["write", "closeUnlessUnread"])
        #expect(busy.sentText.contains("Connection: close\r\n"))
    }

    /// A request still arriving when the server stops is answered 503 and closed at once: a slow client never
    /// holds the stop until its timeout.
    @Test func drainingAnswersRequestsStillArrivingWith503() {
        let date = Array("Thu, 01 Jan 1970 00:00:00 GMT".utf8)
        let head = Harness()
        head.receive("GET /a HTTP/1.1\r\nHost: t\r\n")
        #expect(head.run() == [])
        head.machine.drain(date: date)
        #expect(head.run().first == "rejected 503")
        #expect(head.sentText.hasPrefix("HTTP/1.1 503"))
        #expect(head.sentText.contains("Connection: close\r\n") && head.sentText.contains("shutting down"))

        let body = Harness()
        body.receive("POST /a HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\nx")
        #expect(body.run() == [])
        body.machine.drain(date: date)
        #expect(body.run().first == "rejected 503")
        #expect(body.sentText.hasPrefix("HTTP/1.1 503"))
    }

    /// Buffered pipelined requests stop at the output high-water mark and must continue as soon as the socket
    /// drains, even though no new byte will ever arrive to prompt it.
    @Test func bufferedRequestsContinueWhenTheSocketDrains() {
        let harness = Harness(adjust: { $0.outputHighWater = 300 })
        harness.room = 0
        harness.receive(String(repeating: "GET /abc HTTP/1.1\r\nHost: t\r\n\r\n", count: 20))
        let first = harness.run()
        #expect(first.filter { $0.hasPrefix("dispatch") }.count < 20)
        #expect(harness.machine.wantsWrite)
        var dispatched = first.filter { $0.hasPrefix("dispatch") }.count
        for _ in 0..<100 where dispatched < 20 {
            harness.room = 200
            harness.machine.becameWritable()
            dispatched += harness.run().filter { $0.hasPrefix("dispatch") }.count
        }
        #expect(dispatched == 20)
        harness.room = nil
        harness.machine.becameWritable()
        harness.run()
        #expect(harness.sentText.components(separatedBy: "HTTP/1.1 200 OK").count == 21)
        #expect(harness.machine.isQuiescent)
    }

    /// A client that pipelines and never reads: once output waits above the high-water mark nothing more is
    /// parsed, and between bodies input is read only up to a small bound, so such a connection holds little
    /// memory (attacks held 1.5–3.5 MB per connection).
    @Test func aClientThatNeverReadsIsNotReadFromOnceOutputBacksUp() {
        let harness = Harness(adjust: {
            $0.outputHighWater = 300
            $0.maxBufferedInput = 1_000
        })
        harness.room = 0
        harness.receive(String(repeating: "GET /abc HTTP/1.1\r\nHost: t\r\n\r\n", count: 20))
        harness.run()
        #expect(harness.machine.wantsRead)  // 20 small requests, under the blocked bound
        harness.receive(String(repeating: "GET /abc HTTP/1.1\r\nHost: t\r\n\r\n", count: 40))
        harness.run()
        #expect(!harness.machine.wantsRead)
        // The client reads: output drains, parsing goes on, and reading resumes.
        harness.room = nil
        harness.machine.becameWritable()
        for _ in 0..<100 where !harness.machine.isQuiescent {
            harness.machine.beginTurn()
            harness.machine.becameWritable()
            harness.run()
        }
        #expect(harness.machine.wantsRead)
        #expect(harness.sentText.components(separatedBy: "HTTP/1.1 200 OK").count == 61)
    }

    /// The write timeout counts from the last byte the socket took, not from the last byte the client sent: a
    /// client that never reads and trickles a byte now and then does not keep its unread answers, and its slot.
    @Test func aClientThatTricklesInputButNeverReadsIsClosedAtTheWriteTimeout() {
        let harness = Harness(adjust: { $0.outputHighWater = 300 })
        harness.room = 0
        harness.receive(
            String(repeating: "GET /abc HTTP/1.1\r\nHost: t\r\n\r\n", count: 20) + "GET /d HTTP/1.1\r\nX-A: "
        )
        harness.run()
        #expect(harness.machine.wantsWrite)
        var closedAfter: Int?
        for second in stride(from: 5, through: 60, by: 5) {
            harness.now += 5_000_000_000
            harness.receive("a")
            harness.run()
            if harness.fireTimers() {
                closedAfter = second
                break
            }
        }
        #expect(closedAfter == 35)  // the first check past 30 s without the socket taking a byte
        #expect(harness.run() == ["close"])
    }

    @Test func aDeepPipelineYieldsAfterItsTurnsBudgetAndContinuesNextTurn() {
        let harness = Harness(adjust: { $0.requestsPerTurn = 2 })
        harness.receive(String(repeating: "GET /p HTTP/1.1\r\nHost: t\r\n\r\n", count: 5))
        #expect(harness.run() == ["dispatch GET /p", "dispatch GET /p", "write", "yield"])
        harness.machine.beginTurn()
        #expect(harness.run() == ["dispatch GET /p", "dispatch GET /p", "write", "yield"])
        harness.machine.beginTurn()
        #expect(harness.run() == ["dispatch GET /p", "write"])
        #expect(harness.machine.isQuiescent)
    }

    /// With many busy connections the loop gives each a smaller budget: a turn over all of them stays short.
    @Test func aTurnsBudgetFromTheLoopIsNeverAboveTheConfiguredOne() {
        let harness = Harness(adjust: { $0.requestsPerTurn = 3 })
        harness.receive(String(repeating: "GET /p HTTP/1.1\r\nHost: t\r\n\r\n", count: 6))
        harness.machine.beginTurn(budget: 1)
        #expect(harness.run() == ["dispatch GET /p", "write", "yield"])
        harness.machine.beginTurn(budget: 100)
        #expect(harness.run() == ["dispatch GET /p", "dispatch GET /p", "dispatch GET /p", "write", "yield"])
        harness.machine.beginTurn(budget: 2)
        #expect(harness.run() == ["dispatch GET /p", "dispatch GET /p", "write"])
        #expect(harness.machine.isQuiescent)
    }

    @Test func aConnectionThatNeverSpeaksClosesAfterTheFirstByteTimeout() {
        let silent = Harness(configure: { $0.firstByteTimeout = .seconds(10) })
        silent.now += 9_000_000_000
        #expect(!silent.fireTimers())
        silent.now += 2_000_000_000
        #expect(silent.fireTimers())
        #expect(silent.run() == ["close"])
        #expect(silent.sent.isEmpty)

        let spoken = Harness(configure: { $0.firstByteTimeout = .seconds(10) })
        spoken.receive("GET /a HTTP/1.1\r\nHost: t\r\n\r\n")
        spoken.run()
        spoken.now += 11_000_000_000
        #expect(!spoken.fireTimers())
    }

    // MARK: bodies

    /// `GET /healthz` (no body), `POST /small` (16 bytes at most), `POST /json` (its own 413).
    static let bodyRoutes: Router = {
        var router = Router()
        router.get("/healthz") { _ in .text("ok") }
        router.post("/small", bodyLimit: .upTo(16)) { _ in .text("") }
        let json = BodyLimit.upTo(16) { _ in HTTPResponse(status: .contentTooLarge, body: Array("{}".utf8)) }
        router.post("/json", bodyLimit: json) { _ in .text("") }
        return router
    }()

    /// A body nobody takes is answered when its head arrives, before any of it is sent or buffered: 405 with the
    /// methods the path takes, 404 for no route. Before, the whole megabyte was read first (and held for up to the
    /// body timeout).
    @Test func aBodyForAnotherMethodOrNoRouteIsRefusedWhenTheHeadArrives() {
        let wrongMethod = Harness(router: Self.bodyRoutes)
        wrongMethod.receive("POST /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: 1000000\r\n\r\n")
        #expect(wrongMethod.run() == ["refuse 405 POST /healthz", "write", "closeUnlessUnread"])
        #expect(wrongMethod.sentText.hasPrefix("HTTP/1.1 405 Method Not Allowed\r\n"))
        #expect(wrongMethod.sentText.contains("Allow: GET, HEAD\r\n"))
        #expect(wrongMethod.sentText.contains("Connection: close\r\n"))

        let noRoute = Harness(router: Self.bodyRoutes)
        noRoute.receive("PUT /nothing HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
        #expect(noRoute.run() == ["refuse 404 PUT /nothing", "write", "shutdownWrite"])
        #expect(noRoute.sentText.hasPrefix("HTTP/1.1 404 Not Found\r\n"))
    }

    /// A declared body over the route's limit is a 413 at once, in the route's own words, and a client waiting
    /// for `100 Continue` never gets one; within the limit it does.
    @Test func aDeclaredBodyOverTheRoutesLimitIsRefusedWithoutAContinue() {
        let over = Harness(router: Self.bodyRoutes)
        over.receive("POST /json HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 17\r\n\r\n")
        #expect(over.run() == ["refuse 413 POST /json", "write", "closeUnlessUnread"])
        #expect(!over.sentText.contains("100 Continue"))
        #expect(over.sentText.hasSuffix("\r\n\r\n{}"))

        let plain = Harness(router: Self.bodyRoutes)
        plain.receive("GET /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\n\r\nx")
        #expect(plain.run() == ["refuse 413 GET /healthz", "write", "shutdownWrite"])
        // A route that takes no body says so, not that the body is "too large".
        #expect(plain.sentText.contains("This request takes no body"))

        let within = Harness(router: Self.bodyRoutes)
        within.receive("POST /small HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 16\r\n\r\n")
        #expect(within.run() == ["write"])
        #expect(within.sentText == "HTTP/1.1 100 Continue\r\n\r\n")
        within.receive("0123456789abcdef")
        #expect(within.run() == ["dispatch POST /small", "write"])
    }

    /// A chunked body is cut off with the route's 413 the moment it passes the limit, not read to its end.
    @Test func aChunkedBodyIsRefusedTheMomentItPassesTheRoutesLimit() {
        let harness = Harness(router: Self.bodyRoutes)
        harness.receive("POST /small HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
        harness.receive("10\r\n0123456789abcdef\r\n")
        #expect(harness.run() == [])
        harness.receive("1\r\n")
        #expect(harness.run() == ["refuse 413 POST /small", "write", "shutdownWrite"])
    }

    /// Many tiny chunks or long extensions pass the limit through their framing: 413 at once. Before, framing was
    /// free, so such a body filled the input bound with little data and sat until the body timeout's 408.
    @Test func chunkFramingCountsAgainstTheLimit() {
        let tiny = Harness(configure: { $0.limits.maxBodyBytes = 1024 })
        tiny.receive("POST /e HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
        tiny.receive(String(repeating: "1\r\na\r\n", count: 400))
        #expect(tiny.run() == ["refuse 413 POST /e", "write", "shutdownWrite"])

        let extensions = Harness(configure: { $0.limits.maxBodyBytes = 1024 })
        extensions.receive("POST /e HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
        let line = "1;" + String(repeating: "x", count: 900) + "\r\na\r\n"
        extensions.receive(line + line)
        #expect(extensions.run() == [])
        extensions.receive(line)
        #expect(extensions.run() == ["refuse 413 POST /e", "write", "shutdownWrite"])
    }

    /// A body is taken out of the input as it arrives, so reading goes on past the input bound and the body is
    /// held once; before, the whole body sat in the input (and a copy of it was made at the end).
    @Test func aBodyLargerThanTheInputBoundIsReadThrough() {
        let harness = Harness(adjust: { $0.maxBufferedInput = 1_000 })
        harness.answerAtOnce = false
        harness.receive("POST /e HTTP/1.1\r\nHost: t\r\nContent-Length: 5000\r\n\r\n")
        for _ in 0..<5 {
            #expect(harness.run() == [])
            #expect(harness.machine.wantsRead)
            harness.receive(String(repeating: "b", count: 1000))
        }
        #expect(harness.run() == ["dispatch POST /e"])
    }
}
