import Dispatch
import Foundation
import HTTPServer
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
}
