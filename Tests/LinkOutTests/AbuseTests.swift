import Foundation
import TestSupport
import Testing

@testable import LinkOut

/// The whole application against clients that misbehave: too many connections, guessed secrets, forged ids.
@Suite("LinkOut under abuse")
struct AbuseTests {
    @Test func theConfiguredPerClientConnectionCapSheds503() throws {
        let live = try LiveApplication { $0.server.maxConnectionsPerClient = 2 }
        let held = try (0..<2).map { _ in try live.client() }
        for client in held {
            #expect(try client.roundTrip("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n").status == 200)
        }
        let excess = try live.client()
        #expect(try excess.readResponse().status == 503)
        for client in held {
            #expect(try client.roundTrip("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n").status == 200)
        }
    }
}
