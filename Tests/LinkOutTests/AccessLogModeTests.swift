import Foundation
import TestSupport
import Testing

@testable import LinkOut

@Suite("Access log modes")
struct AccessLogModeTests {
    @Test func theModeIsReadFromTheFileAndTheEnvironment() throws {
        #expect(try Configuration.parse(Data("{}".utf8)).accessLog == .all)
        #expect(try Configuration.parse(Data(#"{"logging": {"accessLog": "errors"}}"#.utf8)).accessLog == .errors)
        #expect(throws: ConfigurationError.self) {
            try Configuration.parse(Data(#"{"logging": {"accessLog": "some"}}"#.utf8))
        }
        var configuration = Configuration()
        try configuration.apply(environment: ["LINKOUT_ACCESS_LOG": "off"])
        #expect(configuration.accessLog == .off)
    }

    @Test func errorsModeLogsOnlyRefusalsAndFailuresWhileMetricsCountEverything() throws {
        let live = try LiveApplication { $0.accessLog = .errors }
        // One connection, so the lines are recorded in the order the requests were answered.
        let client = try live.client()
        #expect(try client.roundTrip("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n").status == 200)
        #expect(try client.roundTrip("GET /no-such-page HTTP/1.1\r\nHost: t\r\n\r\n").status == 404)
        #expect(try client.roundTrip("GET /no-such-page HTTP/1.1\r\nHost: t\r\n\r\n").status == 404)
        let requestLines = { live.logLines.all.filter { $0.contains(#""message":"request""#) } }
        #expect(eventually(within: 30) { requestLines().count >= 2 })
        #expect(requestLines().allSatisfy { $0.contains(#""status":"404""#) })
        #expect(requestLines().count == 2)
        let metrics = try live.get("/metrics").text
        #expect(metrics.contains(#"route="healthz",status="200""#))
    }

    /// The routes of apps without a backend are counted under names of their own, not as `other` (what an
    /// unknown path someone makes up is counted as).
    @Test func theAppRoutesAreCountedUnderTheirOwnNames() throws {
        let live = try LiveApplication()
        _ = try live.get("/v1/app/entitlements")
        _ = try live.post("/v1/app/redemptions", contentType: "application/json", body: "{}")
        #expect(try live.get("/.well-known/jwks.json").status == 200)
        _ = try live.get("/no-such-page")
        let metrics = try live.get("/metrics").text
        for route in ["app_entitlements_api", "app_redemptions_api", "jwks", "other"] {
            #expect(metrics.contains("linkout_http_requests_total{route=\"\(route)\""), "\(route)")
        }
    }
}
