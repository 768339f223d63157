import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// A rejected token through the whole server: Apple's `UNREPORTED` notice sends it again, and the operator sees
/// it (`/admin/reports?state=needs_attention`, `/metrics`) and resolves it through the admin API.
@Suite("Live rejections")
struct LiveRejectionTests {
    static let admin = ["Authorization": "Bearer admin-secret"]

    @Test func anUnreportedNoticeSendsARejectedReportAgain() throws {
        let setup = try NotificationTests.Setup()
        let live = try setup.live(grace: 0)
        #expect(live.firstReportingPassIsOver())
        let apple = try setup.fakeApple
        let id = "revived-\(UUID().uuidString.lowercased())"
        let now = Clock.system.nowMilliseconds()
        // Scripted before the token exists: the server's own pass may send its report at any moment.
        apple.enqueue(FakeAppleServer.rejection([FakeAppleServer.AppleError.statusRegression]))
        try live.recordAppToken(id, now: now)
        live.application.reporting.tick()
        live.application.reporting.tick()
        #expect(apple.received.count == 1)
        #expect(try live.ledger().reports.reports(for: ExternalPurchaseID(id)).map(\.state) == [.rejected])
        let signed = try setup.signer.sign(
            NotificationSigner.tokenPayload(
                subtype: "UNREPORTED",
                externalPurchaseId: id,
                tokenCreationDate: now - 60_000
            )
        )
        #expect(try NotificationTests.deliver(live, signed).status == 200)
        live.application.reporting.tick()
        let received = apple.received
        #expect(received.count == 2)
        #expect(received.count == 2 && received[1].body == received[0].body)
        #expect(try live.ledger().reports.reports(for: ExternalPurchaseID(id)).map(\.state) == [.accepted])
    }

    @Test func theOperatorSeesAndResolvesARejectedTokenThroughTheAdminAPI() throws {
        let setup = try LiveReportingTests.Setup()
        let live = try LiveApplication { setup.configure(&$0, grace: 0) }
        #expect(live.firstReportingPassIsOver())
        let id = "attention-\(UUID().uuidString.lowercased())"
        setup.apple.enqueue(FakeAppleServer.rejection([FakeAppleServer.AppleError.statusRegression]))
        try live.recordAppToken(id, now: Clock.system.nowMilliseconds())
        live.application.reporting.tick()
        #expect(try live.ledger().reports.reports(for: ExternalPurchaseID(id)).map(\.state) == [.rejected])

        let listed = try live.get("/admin/reports?state=needs_attention", headers: Self.admin)
        #expect(listed.status == 200)
        #expect(listed.text.contains(#""attention":[{"#))
        #expect(listed.text.contains(id))
        #expect(listed.text.contains("LineItemStatusRegressionError"))
        #expect(try live.get("/metrics").text.contains("linkout_reports_needing_attention 1\n"))

        #expect(try live.post("/admin/tokens/\(id)/resend", contentType: "application/json", body: "").status == 401)
        // Without the admin token a body is not read: a key named twice is not a 400 but a 401.
        let unauthorizedRestate = try live.post(
            "/admin/tokens/\(id)/line-items/x/restate",
            contentType: "application/json",
            body: #"{"lineItemId":"x","lineItemId":"y"}"#
        )
        #expect(unauthorizedRestate.status == 401)
        // The actions that take no body refuse one when the head arrives.
        let withBody = try live.post(
            "/admin/tokens/\(id)/resend",
            contentType: "application/json",
            body: "{}",
            headers: Self.admin
        )
        #expect(withBody.status == 413)
        let unknown = try live.post(
            "/admin/tokens/nope/resend",
            contentType: "application/json",
            body: "",
            headers: Self.admin
        )
        #expect(unknown.status == 404)
        let badItem = try live.post(
            "/admin/tokens/\(id)/line-items/x/restate",
            contentType: "application/json",
            body: #"{"lineItemId":"x"}"#,
            headers: Self.admin
        )
        #expect(badItem.status == 400)
        // A fraction names its field, as on the line-items API.
        let fraction = try live.post(
            "/admin/tokens/\(id)/line-items/x/restate",
            contentType: "application/json",
            body: #"{"lineItemId":"x","quantity":1.5}"#,
            headers: Self.admin
        )
        #expect(fraction.status == 400 && fraction.text.contains("the field quantity must be a whole number"))
        let asForm = try live.post(
            "/admin/tokens/\(id)/line-items/x/restate",
            contentType: "application/x-www-form-urlencoded",
            body: #"{"lineItemId":"x"}"#,
            headers: Self.admin
        )
        #expect(asForm.status == 415 && asForm.text.contains("unsupported_media_type"), "\(asForm.text)")
        let resolved = try live.post(
            "/admin/tokens/\(id)/no-line-item",
            contentType: "application/json",
            body: "",
            headers: Self.admin
        )
        #expect(resolved.status == 200)
        #expect(resolved.text.contains(#""action":"no-line-item""#))
        // The audit log has the action that changed what Apple gets, and none of the refused ones.
        let audited = try live.ledger().audit.entries().filter { $0.action.hasPrefix("report.") }
        #expect(audited.map(\.action) == ["report.no_line_item"])
        #expect(audited.first?.subject == id)
        #expect(audited.first?.before?.contains("rejected") == true)
        #expect(audited.first?.actor == "admin:" + (try AuditFingerprint(ledger: live.ledger()))("admin-secret"))
        #expect(audited.first?.origin == "127.0.0.1")
        live.application.reporting.tick()
        #expect(setup.apple.received.count == 2)
        #expect(try live.ledger().reports.reports(for: ExternalPurchaseID(id)).map(\.state) == [.accepted])
        #expect(try live.get("/metrics").text.contains("linkout_reports_needing_attention 0\n"))
        let again = try live.post(
            "/admin/tokens/\(id)/resend",
            contentType: "application/json",
            body: "",
            headers: Self.admin
        )
        #expect(again.status == 409)
    }
}
