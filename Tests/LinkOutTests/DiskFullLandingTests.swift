import Domain
import ExternalPurchase
import Foundation
import TestSupport
import Testing

@testable import LinkOut

/// The application on a disk that fills up: landings are refused at once with a page that says to retry, and
/// `/readyz` says why, until space is freed.
@Suite("Full disk, live")
struct DiskFullLandingTests {
    /// A token StoreKit could have made just now, encoded.
    static func freshToken() -> String {
        let token = TokenMinter.mint(
            bundleId: "com.example",
            appAppleId: 1_234_567_890,
            sandbox: false,
            tokenType: nil,
            nowMilliseconds: Int64(Date().timeIntervalSince1970 * 1000)
        )
        return TokenMinter.encode(token)
    }

    static func freshTarget() -> String {
        "/?externalPurchaseToken=\(freshToken())&bundleId=com.example"
    }

    @Test func aFullDiskAnswersLandingsWithAQuick503AndReadyzSaysWhy() throws {
        // Mounting needs root; without it this fails (never skips), so the full-disk path is never silently unchecked.
        let disk = try SmallFilesystem(bytes: 2 << 20)
        defer { disk.unmount() }
        let live = try LiveApplication {
            $0.storage.dataDir = disk.path + "/data"
            $0.server.rateLimitPerSecond = 0  // thousands of landings from one address, on purpose
            $0.adminToken = DashboardTests.adminToken
        }
        try withExtendedLifetime(live) {
            #expect(try live.get(Self.freshTarget()).status == 303)
            #expect(try live.get("/readyz").status == 200)
            // Signed in before the disk fills (a sign-in is a write the full disk refuses).
            let session = try DashboardTests.signIn(live)
            #expect(try !live.get("/admin", headers: ["Cookie": session]).text.contains("not being recorded"))

            let filler = try disk.fill()
            // The last free bytes may still take a few visits; the disk refuses one soon after.
            var refusal: RawClient.Response?
            var refusalTime = Duration.zero
            for _ in 0..<2_000 {
                let started = ContinuousClock.now
                let response = try live.get(Self.freshTarget(), headers: ["Accept": "text/html"])
                guard response.status == 303 else {
                    refusal = response
                    refusalTime = ContinuousClock.now - started
                    break
                }
            }
            let refused = try #require(refusal, "the full disk took 2,000 visits")
            #expect(refused.status == 503)
            #expect(refusalTime < .seconds(1), "the refusal took \(refusalTime)")
            #expect(refused.header("Content-Type") == "text/html; charset=utf-8")
            #expect(refused.text.contains("Please try again"))
            // A full disk does not clear within a second: clients are asked to wait longer than after a hiccup.
            let retryAfter = try #require(Int(refused.header("Retry-After") ?? ""))
            #expect(retryAfter >= 10)
            let ready = try live.get("/readyz")
            #expect(ready.status == 503)
            #expect(ready.text.contains("database: disk full: visits are refused"), "\(ready.text)")
            // Later landings are refused just as quickly while the disk stays full.
            let started = ContinuousClock.now
            #expect(try live.get(Self.freshTarget()).status == 503)
            #expect(ContinuousClock.now - started < .seconds(1))
            // The log says so once, not once a landing (thousands a second could fill the log's disk too).
            for _ in 0..<20 { #expect(try live.get(Self.freshTarget()).status == 503) }
            let refusedLines = live.logLines.all.filter { $0.contains("not recorded") }
            #expect(refusedLines.count == 1, "\(refusedLines)")
            // The dashboard says so at the top, as `/readyz` does.
            let dashboard = try live.get("/admin", headers: ["Cookie": session])
            #expect(dashboard.status == 200)
            #expect(dashboard.text.contains("Landings are not being recorded: the data folder&#39;s disk is full"))

            // A write of the API the disk cannot take is a 503 to come back to, in the API's JSON, never a 500.
            let api = try live.post(
                "/v1/tokens",
                contentType: "application/json",
                body: #"{"token": "\#(Self.freshToken())"}"#
            )
            #expect([201, 503].contains(api.status), "\(api.status) \(api.text)")
            if api.status == 503 {
                #expect(api.text.contains(#""error""#) && api.header("Retry-After") == "30", "\(api.text)")
            }

            // Space freed and no landing since: `/readyz` turns ready by itself (an orchestrator sends an unready
            // server nothing that would clear it).
            try FileManager.default.removeItem(atPath: filler)
            #expect(eventually(within: 30) { (try? live.get("/readyz").status) == 200 })
            #expect(try live.get(Self.freshTarget()).status == 303)
            // And once that it is over, with how many were refused.
            let recovered = live.logLines.all.filter { $0.contains("visits recorded again") }
            #expect(recovered.count == 1 && recovered.first?.contains(#""refused":""#) == true, "\(recovered)")
        }
    }
}
