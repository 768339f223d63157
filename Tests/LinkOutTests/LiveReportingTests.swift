import Crypto
import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// The whole server with reporting on: a StoreKit visit or posted line items end in reports at a fake Apple.
@Suite("Live reporting")
struct LiveReportingTests {
    final class Setup {
        let key: ES256Key
        let apple: FakeAppleServer
        let keyFile: URL

        init() throws {
            key = try ES256Key.generate()
            apple = try FakeAppleServer(publicKey: try ES256Key(pem: try key.publicKeyPEM()))
            keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-key-\(UUID()).p8")
            try Data(try key.privateKeyPEM().utf8).write(to: keyFile)
        }

        func configure(_ configuration: inout Configuration, grace: Int64) {
            configuration.apple.issuerId = "57246542-96fe-1a63e053-0824d011072a"
            configuration.apple.keyId = "2X9R4HXF34"
            configuration.apple.privateKeyFile = keyFile.path
            configuration.apple.productionURL = apple.baseURL
            configuration.apple.sandboxURL = apple.baseURL
            configuration.reporting.noLineItemAfterSeconds = grace
            configuration.reporting.pollIntervalSeconds = 1
            configuration.apiToken = "backend-secret"
            configuration.adminToken = "admin-secret"
        }

        deinit {
            apple.stop()
            try? FileManager.default.removeItem(at: keyFile)
        }
    }

    @Test func applesExampleVisitIsFollowedByExactlyOneNoLineItemReport() throws {
        let setup = try Setup()
        let time = ManualClock()
        let live = try LiveApplication(clock: time.clock) { setup.configure(&$0, grace: 0) }
        #expect(try live.get(AppleVectors.documentedTarget).status == 303)
        // A landing does not wake reporting: the next poll (1 s on the server's clock) finds the visit once it is
        // in the tables. The clock is moved, not waited for.
        _ = live.ledger()
        time.advance(by: 1_000)
        #expect(setup.apple.waitForRequest())
        live.application.reporting.tick()
        live.application.reporting.tick()
        let received = setup.apple.received
        #expect(received.count == 1)
        let request = try #require(received.first)
        #expect(request.signatureValid)
        #expect(request.problems == [])
        let body = try #require(request.bodyObject)
        #expect(Set(body.keys) == ["requestIdentifier", "externalPurchaseId", "status"])
        #expect(body["externalPurchaseId"] as? String == "00000000-0000-0000-0000-000000000000")
        #expect(body["status"] as? String == "NO_LINE_ITEM")
        #expect(UUID(uuidString: body["requestIdentifier"] as? String ?? "") != nil)
        let admin = try live.get(
            "/admin/tokens/00000000-0000-0000-0000-000000000000",
            headers: ["Authorization": "Bearer admin-secret"]
        )
        #expect(admin.status == 200)
        #expect(admin.text.contains("\"state\":\"accepted\""))
        let requestIdentifier = try #require(body["requestIdentifier"] as? String)
        let copy = try live.get(
            "/admin/reports/\(requestIdentifier)/apple",
            headers: ["Authorization": "Bearer admin-secret"]
        )
        #expect(copy.status == 200)
        #expect(copy.text.contains("\"appleStatus\":200"))
        #expect(copy.text.contains("NO_LINE_ITEM"))
    }

    @Test func postedLineItemsProduceOneLineItemReport() throws {
        let setup = try Setup()
        let live = try LiveApplication { setup.configure(&$0, grace: 86_400) }
        // A token created now: the NO_LINE_ITEM wait counts from its creation (Apple's clock), so a token from
        // Apple's 2024 example would be due at once and race the line items posted below.
        let token = TokenMinter.mint(
            bundleId: "com.example",
            appAppleId: 1_234_567_890,
            sandbox: false,
            tokenType: nil,
            nowMilliseconds: Clock.system.nowMilliseconds()
        )
        #expect(
            try live.get("/?externalPurchaseToken=\(TokenMinter.encode(token))&bundleId=com.example").status == 303
        )
        let path = "/v1/tokens/\(token.externalPurchaseId)/line-items"
        // Apple's one-time-buy example item, dated an hour ago: Apple takes line items up to three years old, so a
        // fixed date would make this test fail once it ages out.
        let created = Clock.system.nowMilliseconds() - 3_600_000
        let item =
            #"{"lineItemId":"aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa","creationDate":\#(created),"eventType":"BUY","productType":"ONE_TIME_BUY","productIdentifier":"example.one-time-buy.product","amountTaxInclusive":10000,"amountTaxExclusive":8000,"taxAmount":2000,"netAmountTaxExclusive":8000,"reportingCurrency":"EUR","pricingCurrency":"EUR","taxCountry":"ESP","quantity":6}"#
        let body = #"{"lineItems": [\#(item)]}"#
        #expect(try live.post(path, contentType: "application/json", body: body).status == 401)
        let wrong = try live.post(
            path,
            contentType: "application/json",
            body: body,
            headers: ["Authorization": "Bearer nope"]
        )
        #expect(wrong.status == 401)
        let broken = try live.post(
            path,
            contentType: "application/json",
            body: body.replacingOccurrences(of: #""amountTaxInclusive":10000"#, with: #""amountTaxInclusive":10001"#),
            headers: ["Authorization": "Bearer backend-secret"]
        )
        #expect(broken.status == 400)
        #expect(broken.text.contains("IncorrectAmountTaxInclusiveError"))
        let missing = try live.post(
            path,
            contentType: "application/json",
            body: body.replacingOccurrences(of: #""quantity":6"#, with: #""unused":6"#),
            headers: ["Authorization": "Bearer backend-secret"]
        )
        #expect(missing.status == 400)
        #expect(missing.text.contains("OmittedFieldError"))
        // A NUL in an id would end it early in SQLite (two ids alike) and fail the write on PostgreSQL. Also an
        // amount sum past Int64's limit, which once stopped the server.
        let controlCharacter = try live.post(
            path,
            contentType: "application/json",
            body: body.replacingOccurrences(of: "aaaaaaaa-aaaa", with: #"aaaaaaaa\u0000zz"#),
            headers: ["Authorization": "Bearer backend-secret"]
        )
        #expect(controlCharacter.status == 400)
        #expect(controlCharacter.text.contains("invalid_line_item_id"))
        // Nor one that shows otherwise than it is: a bidirectional override, a line separator.
        for hidden in [#"\u202E"#, #"\u2028"#, #"\u0085"#] {
            let shown = try live.post(
                path,
                contentType: "application/json",
                body: body.replacingOccurrences(of: "aaaaaaaa-aaaa", with: "aaaaaaaa\(hidden)zz"),
                headers: ["Authorization": "Bearer backend-secret"]
            )
            #expect(shown.status == 400 && shown.text.contains("invalid_line_item_id"), "\(hidden): \(shown.text)")
        }
        // A '/' could never be named in the admin API's paths (retract, restate).
        let slash = try live.post(
            path,
            contentType: "application/json",
            body: body.replacingOccurrences(of: "aaaaaaaa-aaaa", with: "aaaaaaaa/aaaa"),
            headers: ["Authorization": "Bearer backend-secret"]
        )
        #expect(slash.status == 400 && slash.text.contains("invalid_line_item_id"))
        let overflowing = try live.post(
            path,
            contentType: "application/json",
            body: body.replacingOccurrences(
                of: #""amountTaxExclusive":8000"#,
                with: #""amountTaxExclusive":9223372036854775807"#
            ),
            headers: ["Authorization": "Bearer backend-secret"]
        )
        #expect(overflowing.status == 400)
        #expect(overflowing.text.contains("IncorrectAmountTaxInclusiveError"))
        #expect(try live.get("/healthz").status == 200)
        let accepted = try live.post(
            path,
            contentType: "application/json",
            body: body,
            headers: ["Authorization": "Bearer backend-secret"]
        )
        #expect(accepted.status == 202)
        let again = try live.post(
            path,
            contentType: "application/json",
            body: body,
            headers: ["Authorization": "Bearer backend-secret"]
        )
        #expect(again.status == 200)  // the same item twice is a no-op
        #expect(setup.apple.waitForRequest())
        live.application.reporting.tick()
        let received = setup.apple.received
        #expect(received.count == 1)
        let request = try #require(received.first)
        #expect(request.signatureValid)
        #expect(request.report?.status == .lineItem)
        let sentItem = try #require((request.bodyObject?["lineItems"] as? [Any])?.first as? NSDictionary)
        let appleItem = try #require(try JSONSerialization.jsonObject(with: Data(item.utf8)) as? NSDictionary)
        #expect(sentItem == appleItem)
        let reports = try live.get("/admin/reports", headers: ["Authorization": "Bearer admin-secret"])
        #expect(reports.status == 200)
        #expect(reports.text.contains("LINE_ITEM"))
        #expect(try live.get("/admin/reports").status == 401)
        #expect(
            try live.post(
                "/v1/tokens/unknown/line-items",
                contentType: "application/json",
                body: body,
                headers: ["Authorization": "Bearer backend-secret"]
            ).status == 404
        )
    }

    /// Japan (iOS 26.4) and Brazil (26.5): the app asks StoreKit for a token before every potential transaction
    /// and forwards it with `POST /v1/tokens`. Each keeps its type and expiry, is reported like the EU's
    /// custom-link tokens (`NO_LINE_ITEM` once it expired, not after the link-out tokens' wait: a purchase may
    /// come until then), and is never `DUPLICATE_TOKEN`, even when two of them carry the same dates.
    @Test func japanAndBrazilTokensForwardedByTheAppAreReportedAtTheirExpiry() throws {
        let setup = try Setup()
        let live = try LiveApplication { setup.configure(&$0, grace: 172_800) }
        #expect(live.firstReportingPassIsOver())
        let now = Clock.system.nowMilliseconds()
        let created = now - 3 * 86_400_000
        var tokens: [ExternalPurchaseToken] = []
        for (type, expires) in [
            ("IN_APP", now - 60_000), ("IN_APP", now - 60_000), ("LINK_OUT", now - 60_000),
            ("WITHIN_APP", now - 60_000), ("OUT_OF_APP", now - 60_000), ("LINK_OUT", now + 30 * 86_400_000),
        ] {
            var token = TokenMinter.mint(
                bundleId: "com.example",
                appAppleId: 1_234_567_890,
                sandbox: false,
                tokenType: nil,
                nowMilliseconds: created
            )
            token.tokenType = type
            token.tokenExpirationDate = expires
            tokens.append(token)
            let forwarded = try live.post(
                "/v1/tokens",
                contentType: "application/json",
                body:
                    #"{"token": "\#(TokenMinter.encode(token))", "appAccountToken": "7e3fb20b-4cdb-47cc-936d-99d65f608138"}"#
            )
            #expect(forwarded.status == 201)
            let stored = try #require(try live.ledger().tokens.token(token.externalPurchaseId))
            #expect(stored.token.tokenType == type)
            #expect(stored.token.tokenExpirationDate == expires)
        }
        let expired = tokens.filter { ($0.tokenExpirationDate ?? 0) < now }
        live.application.reporting.tick()
        for _ in expired { #expect(setup.apple.waitForRequest()) }
        live.application.reporting.tick()
        var statuses: [String: ReportStatus] = [:]
        for request in setup.apple.received {
            if let report = request.report { statuses[report.externalPurchaseId.rawValue] = report.status }
            #expect(request.problems == [])
        }
        #expect(setup.apple.received.count == expired.count, "the token still active three days on waits")
        #expect(
            statuses == Dictionary(uniqueKeysWithValues: expired.map { ($0.externalPurchaseId.rawValue, .noLineItem) })
        )
    }

    @Test func readinessSaysWhyReportsWait() throws {
        let live = try LiveApplication()
        let ready = try live.get("/readyz")
        #expect(ready.status == 200)
        #expect(ready.text.contains("database: writable"))
        #expect(ready.text.contains("waiting for Apple credentials: apple.issuerId is empty"))
        #expect(try live.get("/admin/reports", headers: ["Authorization": "Bearer x"]).status == 404)
        #expect(
            try live.post("/v1/tokens/x/line-items", contentType: "application/json", body: "{}").status == 404
        )
    }
}
