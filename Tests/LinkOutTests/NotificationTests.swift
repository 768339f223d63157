import Crypto
import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// App Store Server Notifications through the live server: signed with a chain minted per test whose root the
/// server is told to trust, delivered over HTTP, acted on against a fake Apple.
@Suite("App Store notifications")
struct NotificationTests {
    final class Setup {
        let apple = try? LiveReportingTests.Setup()
        let signer: NotificationSigner
        let directory: URL
        let rootPath: String

        init(signer: NotificationSigner? = nil) throws {
            self.signer = try signer ?? NotificationSigner()
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-notify-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            rootPath = try self.signer.writeRoot(to: directory)
        }

        var fakeApple: FakeAppleServer {
            get throws { try #require(apple).apple }
        }

        func live(grace: Int64 = 86_400) throws -> LiveApplication {
            let apple = try #require(self.apple)
            return try LiveApplication { configuration in
                apple.configure(&configuration, grace: grace)
                configuration.apple.notificationRootCertificates = [self.rootPath]
            }
        }

        deinit { try? FileManager.default.removeItem(at: directory) }
    }

    static let path = "/notifications/appstore"

    static func deliver(_ live: LiveApplication, _ signedPayload: String) throws -> RawClient.Response {
        try live.post(path, contentType: "application/json", body: NotificationSigner.body(signedPayload))
    }

    @Test func unreportedForAnUnknownTokenIsRecordedAndReportedUnrecognizedExactlyOnce() throws {
        let setup = try Setup()
        let live = try setup.live()
        let id = "b2158121-7af9-49d4-9561-\(UUID().uuidString.suffix(12).lowercased())"
        let uuid = UUID().uuidString.lowercased()
        let signed = try setup.signer.sign(
            NotificationSigner.tokenPayload(subtype: "UNREPORTED", externalPurchaseId: id, uuid: uuid)
        )
        let first = try Self.deliver(live, signed)
        #expect(first.status == 200)
        #expect(try setup.fakeApple.waitForRequest())
        // Apple retries a notification it thinks was lost; the copy changes nothing.
        #expect(try Self.deliver(live, signed).status == 200)
        live.application.reporting.tick()
        live.application.reporting.tick()
        let received = try setup.fakeApple.received
        #expect(received.count == 1)
        let report = try #require(received.first?.report)
        #expect(report.status == .unrecognizedToken)
        #expect(report.externalPurchaseId.rawValue == id)
        #expect(report.lineItems == nil)
        #expect(received.first?.problems == [])
        let ledger = live.ledger()
        let token = try #require(try ledger.tokens.token(ExternalPurchaseID(id)))
        #expect(token.source == .notification)
        #expect(token.visitCount == 0)
        let stored = try ledger.notifications.notifications()
        #expect(stored.count == 1)
        #expect(stored.first?.outcome == .unrecognizedReported)
        #expect(stored.first?.processedAt != nil)
        #expect(try ledger.reports.reports(for: ExternalPurchaseID(id)).count == 1)
        let metrics = try live.get("/metrics").text
        #expect(
            metrics.contains(
                #"linkout_notifications_total{type="EXTERNAL_PURCHASE_TOKEN",subtype="UNREPORTED",outcome="unrecognized_reported"} 1"#
            )
        )
        #expect(!live.logLines.all.contains { $0.contains(signed) })
    }

    @Test func unreportedForAKnownTokenSendsItsReportNow() throws {
        let setup = try Setup()
        let live = try setup.live(grace: 86_400)
        let id = "known-\(UUID().uuidString.lowercased())"
        let now = Clock.system.nowMilliseconds()
        try live.recordAppToken(id, now: now)
        live.application.reporting.tick()
        #expect(try setup.fakeApple.received.isEmpty)  // still inside the NO_LINE_ITEM wait
        let signed = try setup.signer.sign(
            NotificationSigner.tokenPayload(
                subtype: "UNREPORTED",
                externalPurchaseId: id,
                tokenCreationDate: now - 60_000
            )
        )
        #expect(try Self.deliver(live, signed).status == 200)
        live.application.reporting.tick()
        let received = try setup.fakeApple.received
        #expect(received.count == 1)
        #expect(received.first?.report?.status == .noLineItem)
        #expect(received.first?.report?.externalPurchaseId.rawValue == id)
        #expect(try live.ledger().notifications.notifications().first?.outcome == .dueNow)
        #expect(try live.ledger().tokens.token(ExternalPurchaseID(id))?.source == .app)
    }

    @Test func createdRecordsTheCustomLinkTokenWithItsTypeAndExpiry() throws {
        let setup = try Setup()
        let live = try setup.live()
        let id = "SANDBOX_\(UUID().uuidString.lowercased())"
        let created = Clock.system.nowMilliseconds() - 1_000
        let signed = try setup.signer.sign(
            NotificationSigner.tokenPayload(
                subtype: "CREATED",
                externalPurchaseId: id,
                tokenCreationDate: created,
                tokenType: "SERVICES",
                tokenExpirationDate: created + 3_600_000
            )
        )
        #expect(try Self.deliver(live, signed).status == 200)
        let token = try #require(try live.ledger().tokens.token(ExternalPurchaseID(id)))
        #expect(token.source == .notification)
        #expect(token.token.tokenType == "SERVICES")
        #expect(token.token.tokenCreationDate == created)
        #expect(token.token.tokenExpirationDate == created + 3_600_000)
        #expect(token.token.environment == .sandbox)
        #expect(try live.ledger().notifications.notifications().first?.outcome == .recorded)
        #expect(try live.ledger().reports.reports(for: ExternalPurchaseID(id)).isEmpty)
    }

    /// A made-up token for a real id lands first (inside the five minutes of skew allowed, typed and expiring as
    /// the forger likes); Apple's signed copy of the token then replaces its values, the correction is logged
    /// without the token, and the report planner works from Apple's creation date.
    @Test func appleCorrectsWhatAForgedLandingRecordedFirst() throws {
        let setup = try Setup()
        let live = try setup.live(grace: 86_400)
        #expect(live.firstReportingPassIsOver())
        let id = UUID().uuidString.lowercased()
        let now = Clock.system.nowMilliseconds()
        let forged = ExternalPurchaseToken(
            appAppleId: 1_234_567_890,
            bundleId: "com.example",
            tokenCreationDate: now + 4 * 60_000,
            externalPurchaseId: ExternalPurchaseID(id),
            tokenType: "SERVICES",
            tokenExpirationDate: now + 3_600_000
        )
        let forgedText = TokenMinter.encode(forged)
        #expect(try live.get("/?externalPurchaseToken=\(forgedText)&bundleId=com.example").status == 303)
        live.application.reporting.tick()
        #expect(try setup.fakeApple.received.isEmpty)  // the made-up date holds the report back

        let created = now - 3 * 86_400_000
        let signed = try setup.signer.sign(
            NotificationSigner.tokenPayload(
                subtype: "CREATED",
                externalPurchaseId: id,
                tokenCreationDate: created,
                tokenType: "ACQUISITION",
                tokenExpirationDate: created + 2 * 86_400_000
            )
        )
        #expect(try Self.deliver(live, signed).status == 200)
        let token = try #require(try live.ledger().tokens.token(ExternalPurchaseID(id)))
        #expect(token.token.tokenCreationDate == created)
        #expect(token.token.tokenType == "ACQUISITION")
        #expect(token.token.tokenExpirationDate == created + 2 * 86_400_000)
        #expect(token.source == .url)
        #expect(token.visitCount == 1)
        #expect(try live.ledger().notifications.notifications().first?.outcome == .known)
        let corrected = live.logLines.all.filter { $0.contains("token corrected to Apple's values") }
        #expect(corrected.count == 1)
        let line = try #require(corrected.first)
        #expect(line.contains(id))
        #expect(line.contains("tokenCreationDate: \(now + 4 * 60_000) -> \(created)"))
        #expect(line.contains("tokenType: SERVICES -> ACQUISITION"))
        #expect(!line.contains("appAppleId"), "only what differed")
        #expect(!live.logLines.all.contains { $0.contains(forgedText) || $0.contains(signed) })

        // By Apple's dates the custom-link token expired a day ago: its NO_LINE_ITEM is due.
        live.application.reporting.tick()
        let received = try setup.fakeApple.received
        #expect(received.count == 1)
        #expect(received.first?.report?.status == .noLineItem)
        #expect(received.first?.report?.externalPurchaseId.rawValue == id)

        // The same values again correct nothing and log nothing.
        let again = try setup.signer.sign(
            NotificationSigner.tokenPayload(
                subtype: "ACTIVE_TOKEN_REMINDER",
                externalPurchaseId: id,
                tokenCreationDate: created,
                tokenType: "ACQUISITION",
                tokenExpirationDate: created + 2 * 86_400_000
            )
        )
        #expect(try Self.deliver(live, again).status == 200)
        #expect(live.logLines.all.filter { $0.contains("token corrected to Apple's values") }.count == 1)
    }

    /// A custom-link token may take purchases until it expires (a year in Apple's one production example; Apple:
    /// "Receiving and decoding external purchase tokens"): Apple's monthly reminder does not make it due; a refreshed
    /// copy of it (same dates, another id) is reported `DUPLICATE_TOKEN` at once; Apple's `UNREPORTED` notice makes the
    /// token itself due.
    @Test func anActiveTokenIsReportedOnlyAsADuplicateOrWhenAppleSaysItIsUnreported() throws {
        let setup = try Setup()
        let live = try setup.live(grace: 86_400)
        #expect(live.firstReportingPassIsOver())
        let id = UUID().uuidString.lowercased()
        let copy = UUID().uuidString.lowercased()
        let created = Clock.system.nowMilliseconds() - 3 * 86_400_000
        func payload(_ subtype: String, _ externalPurchaseId: String) -> String {
            NotificationSigner.tokenPayload(
                subtype: subtype,
                externalPurchaseId: externalPurchaseId,
                tokenCreationDate: created,
                tokenType: "ACQUISITION",
                tokenExpirationDate: created + 365 * 86_400_000
            )
        }
        #expect(try Self.deliver(live, try setup.signer.sign(payload("ACTIVE_TOKEN_REMINDER", id))).status == 200)
        live.application.reporting.tick()
        #expect(try setup.fakeApple.received.isEmpty)
        #expect(try live.ledger().tokens.token(ExternalPurchaseID(id))?.token.tokenType == "ACQUISITION")
        #expect(try live.ledger().notifications.notifications().first?.outcome == .recorded)

        // Apple's CREATED notice for a refreshed copy: no appAccountToken anywhere, grouped by Apple's dates.
        #expect(try Self.deliver(live, try setup.signer.sign(payload("CREATED", copy))).status == 200)
        live.application.reporting.tick()
        #expect(try setup.fakeApple.waitForRequest())
        #expect(try setup.fakeApple.received.map { $0.report?.externalPurchaseId } == [ExternalPurchaseID(copy)])
        #expect(try setup.fakeApple.received.first?.report?.status == .duplicateToken)

        #expect(try Self.deliver(live, try setup.signer.sign(payload("UNREPORTED", id))).status == 200)
        live.application.reporting.tick()
        #expect(try setup.fakeApple.waitForRequest())
        let received = try setup.fakeApple.received
        #expect(received.count == 2)
        #expect(received.last?.report?.externalPurchaseId.rawValue == id)
        #expect(received.last?.report?.status == .noLineItem)
        #expect(received.last?.problems == [])
    }

    @Test func aTestNotificationIsAcknowledgedAndNotStored() throws {
        let setup = try Setup()
        let live = try setup.live()
        let payload =
            #"{"notificationType":"TEST","notificationUUID":"\#(UUID().uuidString.lowercased())","version":"2.0","signedDate":\#(Clock.system.nowMilliseconds()),"data":{"bundleId":"com.example","environment":"Sandbox"}}"#
        #expect(try Self.deliver(live, try setup.signer.sign(payload)).status == 200)
        #expect(try live.ledger().notifications.notifications().isEmpty)
        #expect(live.logLines.all.contains { $0.contains("test notification received") })
    }

    /// Every way a notification can be forged or broken: a 4xx with a reason, a log line naming it, nothing
    /// stored, no token recorded.
    @Test func forgedOrBrokenNotificationsAreRefusedAndNothingIsStored() throws {
        let setup = try Setup()
        let live = try setup.live()
        let signer = setup.signer
        let id = "forged-\(UUID().uuidString.lowercased())"
        let payload = NotificationSigner.tokenPayload(subtype: "UNREPORTED", externalPurchaseId: id)
        let valid = try signer.sign(payload)
        let parts = valid.split(separator: ".").map(String.init)
        let otherPayload = NotificationSigner.tokenPayload(subtype: "UNREPORTED", externalPurchaseId: id + "x")
        let tampered = parts[0] + "." + Base64URL.encode(Array(otherPayload.utf8)) + "." + parts[2]

        // Certificates that chain to the trusted root but are wrong in one way each.
        let noLeafMarker = try X509Certificate.Builder(
            commonName: "No Marker Leaf",
            serialNumber: 9,
            notBefore: NotificationSigner.validFrom,
            notAfter: NotificationSigner.validUntil,
            isCertificateAuthority: false,
            markerOIDs: ["1.2.840.113635.100.6.11.2"]
        ).sign(subjectKey: signer.leafKey, issuer: signer.intermediate, issuerKey: signer.intermediateKey)
        let expiredLeaf = try X509Certificate.Builder(
            commonName: "Expired Leaf",
            serialNumber: 10,
            notBefore: NotificationSigner.validFrom,
            notAfter: NotificationSigner.validFrom + 86_400,
            isCertificateAuthority: false,
            markerOIDs: [SignedPayloadVerifier.leafOID]
        ).sign(subjectKey: signer.leafKey, issuer: signer.intermediate, issuerKey: signer.intermediateKey)
        let stranger = try NotificationSigner()

        let cases: [(name: String, body: String, status: Int, reason: String)] = [
            ("tampered payload", NotificationSigner.body(tampered), 400, "badSignature"),
            (
                "wrong leaf OID",
                NotificationSigner.body(
                    try signer.sign(
                        payload,
                        header: [
                            "alg": "ES256",
                            "x5c": NotificationSigner.x5c([noLeafMarker, signer.intermediate, signer.root]),
                        ]
                    )
                ), 400, "missingAppleOID"
            ),
            (
                "leaf expired at signedDate",
                NotificationSigner.body(
                    try signer.sign(
                        payload,
                        header: [
                            "alg": "ES256",
                            "x5c": NotificationSigner.x5c([expiredLeaf, signer.intermediate, signer.root]),
                        ]
                    )
                ), 400, "expiredAtSignedDate"
            ),
            ("untrusted root", NotificationSigner.body(try stranger.sign(payload)), 400, "untrustedChain"),
            (
                "unknown bundle",
                NotificationSigner.body(
                    try signer.sign(
                        NotificationSigner.tokenPayload(
                            subtype: "UNREPORTED",
                            externalPurchaseId: id,
                            bundleId: "com.unknown"
                        )
                    )
                ), 400, "unknown_app"
            ),
            (
                "wrong appAppleId",
                NotificationSigner.body(
                    try signer.sign(
                        NotificationSigner.tokenPayload(subtype: "UNREPORTED", externalPurchaseId: id, appAppleId: 42)
                    )
                ), 400, "app_apple_id_mismatch"
            ),
            (
                "an id of no shape Apple issues",
                NotificationSigner.body(
                    try signer.sign(
                        NotificationSigner.tokenPayload(subtype: "UNREPORTED", externalPurchaseId: "../x\n\u{202E}")
                    )
                ), 400, "invalid_external_purchase_id"
            ),
            (
                "alg none",
                NotificationSigner.body(
                    Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + parts[1] + "."
                ), 400, "unsupportedAlgorithm"
            ),
            (
                "alg HS256",
                NotificationSigner.body(
                    try signer.sign(payload, header: ["alg": "HS256", "x5c": NotificationSigner.x5c(signer.chain)])
                ), 400, "unsupportedAlgorithm"
            ),
            (
                "two certificates",
                NotificationSigner.body(
                    try signer.sign(
                        payload,
                        header: ["alg": "ES256", "x5c": NotificationSigner.x5c([signer.leaf, signer.intermediate])]
                    )
                ), 400, "wrongCertificateCount"
            ),
            (
                "four certificates",
                NotificationSigner.body(
                    try signer.sign(
                        payload,
                        header: ["alg": "ES256", "x5c": NotificationSigner.x5c(signer.chain + [signer.root])]
                    )
                ), 400, "wrongCertificateCount"
            ),
            ("garbage JWS", NotificationSigner.body("not.a.jws"), 400, "malformedJWS"),
            ("garbage body", "{{{", 400, "malformed_body"),
            // Refused before the JWS is read, as every JSON body outside JSON's grammar or naming a key twice is.
            ("trailing comma", #"{"signedPayload": "a.b.c",}"#, 400, "malformed_body"),
            ("payload twice", #"{"signedPayload": "a.b.c", "signedPayload": "d.e.f"}"#, 400, "duplicate_key"),
            ("oversized body", NotificationSigner.body(String(repeating: "a", count: 70_000)), 413, "body_too_large"),
        ]
        for test in cases {
            let response = try live.post(Self.path, contentType: "application/json", body: test.body)
            #expect(response.status == test.status, "\(test.name)")
            #expect(response.text.contains("\"code\":\"\(test.reason)\""), "\(test.name): \(response.text)")
            #expect(
                live.logLines.all.contains { $0.contains("notification refused") && $0.contains(test.reason) },
                "\(test.name)"
            )
        }
        let ledger = live.ledger()
        #expect(try ledger.notifications.notifications().isEmpty)
        #expect(try ledger.tokens.token(ExternalPurchaseID(id)) == nil)
        #expect(try ledger.tokens.token(ExternalPurchaseID(id + "x")) == nil)
        #expect(try setup.fakeApple.received.isEmpty)
        #expect(!live.logLines.all.contains { $0.contains(parts[1]) })
    }
}
