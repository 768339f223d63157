import Crypto
import Domain
import ExternalPurchase
import Foundation
import HTTPServer
import Logging
import Outbound
import Synchronization
import TestSupport
import Testing

/// A stand-in for the App Store Server API's Get Notification History on 127.0.0.1, reached through the real
/// libcurl client. It serves scripted pages in order and records what each request carried.
final class FakeHistoryServer: Sendable {
    struct Received: Sendable {
        var path: String
        var paginationToken: String?
        var authorization: String
        var body: [UInt8]
    }

    /// What the route handler shares with the test.
    private final class State: Sendable {
        let pages: Mutex<[HTTPResponse]>
        let log = Mutex<[Received]>([])
        init(_ pages: [HTTPResponse]) { self.pages = Mutex(pages) }
    }

    private let state: State
    private let server: HTTPServer
    let port: Int

    init(responses: [HTTPResponse]) throws {
        let state = State(responses)
        self.state = state
        var configuration = HTTPServer.Configuration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.eventLoopCount = 1
        configuration.workerThreads = 2
        var router = Router()
        router.add("POST", "/inApps/v1/notifications/history") { request in
            state.log.withLock {
                $0.append(
                    Received(
                        path: String(request.path),
                        paginationToken: request.queryValue("paginationToken"),
                        authorization: request.headers["authorization"] ?? "",
                        body: request.body
                    )
                )
            }
            return state.pages.withLock { $0.isEmpty ? HTTPResponse(status: .badRequest) : $0.removeFirst() }
        }
        server = HTTPServer(
            configuration: configuration,
            router: router,
            logger: Logger(label: "fake-history", level: .critical)
        )
        port = try server.start()
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }
    var received: [Received] { state.log.withLock { $0 } }

    func stop() { server.shutdown(gracePeriod: .seconds(1)) }

    static func page(_ signedPayloads: [String], hasMore: Bool, paginationToken: String) throws -> HTTPResponse {
        let page = NotificationHistoryResponse(
            notificationHistory: signedPayloads.map {
                NotificationHistoryItem(
                    signedPayload: $0,
                    sendAttempts: [.init(attemptDate: 1_735_689_600_000, sendAttemptResult: "SUCCESS")]
                )
            },
            hasMore: hasMore,
            paginationToken: paginationToken
        )
        return HTTPResponse(status: .ok, body: Array(try JSONEncoder().encode(page)))
    }
}

@Suite("Get Notification History client")
struct NotificationHistoryClientTests {
    func client(_ server: FakeHistoryServer, key: ES256Key) -> AppStoreServerAPIClient {
        AppStoreServerAPIClient(
            credentials: AppStoreJWT.Credentials(issuerId: "issuer-1", keyId: "KEY123", key: key),
            productionURL: server.baseURL,
            sandboxURL: server.baseURL + "/",
            httpClient: HTTPClient()
        )
    }

    @Test func twoPagesOfExternalPurchaseTokenNotifications() throws {
        let pki = try TestPKI()
        let signedDates: [Int64] = [1, 2, 3].map { TestPKI.middle * 1000 + $0 }
        let payloads = try signedDates.map { try pki.sign(payload: TestPKI.unreportedPayload(signedDate: $0)) }
        // A token holding the characters a query string must escape.
        let token = "page+2/of=2"
        let server = try FakeHistoryServer(responses: [
            try FakeHistoryServer.page(Array(payloads.prefix(2)), hasMore: true, paginationToken: token),
            try FakeHistoryServer.page([payloads[2]], hasMore: false, paginationToken: "end"),
        ])
        defer { server.stop() }
        let key = try ES256Key.generate()
        let query = NotificationHistoryRequest.externalPurchaseTokens(from: 1_730_000_000_000, to: 1_735_000_000_000)

        let result = client(server, key: key).allNotificationHistory(
            query,
            environment: .sandbox,
            bundleId: "com.example",
            now: { 1_735_000_000_123 }
        )
        let received = try result.get()
        #expect(received == payloads)
        let verifier = try pki.verifier()
        #expect(try received.map { try verifier.verify($0).signedDate } == signedDates)

        let requests = server.received
        try #require(requests.count == 2)
        #expect(requests.map(\.path) == ["/inApps/v1/notifications/history", "/inApps/v1/notifications/history"])
        #expect(requests.map(\.paginationToken) == [nil, token])
        for request in requests {
            let body = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? NSDictionary)
            #expect(
                body
                    == [
                        "startDate": 1_730_000_000_000, "endDate": 1_735_000_000_000,
                        "notificationType": "EXTERNAL_PURCHASE_TOKEN",
                    ] as NSDictionary
            )
            // A fresh ES256 JWT signed with the In-App Purchase key, for this bundle.
            #expect(request.authorization.hasPrefix("Bearer "))
            let parts = request.authorization.dropFirst(7).split(separator: ".").map(String.init)
            try #require(parts.count == 3)
            let signature = try #require(Base64URL.decode(parts[2].utf8))
            #expect(key.verify(signature, message: Array((parts[0] + "." + parts[1]).utf8)))
            let claimBytes = try #require(Base64URL.decode(parts[1].utf8))
            let claims = try #require(try JSONSerialization.jsonObject(with: Data(claimBytes)) as? [String: Any])
            #expect(claims["aud"] as? String == "appstoreconnect-v1")
            #expect(claims["bid"] as? String == "com.example")
            #expect(claims["iss"] as? String == "issuer-1")
            // Dated by the caller's clock, not the machine's.
            #expect(claims["iat"] as? Int == 1_735_000_000 - Int(AppStoreJWT.clockSkewSeconds))
        }
    }

    @Test func onePageAtATime() throws {
        let server = try FakeHistoryServer(responses: [
            try FakeHistoryServer.page(["a.b.c"], hasMore: true, paginationToken: "next")
        ])
        defer { server.stop() }
        let page = try client(server, key: try ES256Key.generate()).notificationHistory(
            .externalPurchaseTokens(from: 1, to: 2),
            environment: .production,
            bundleId: "com.example",
            now: 1_735_000_000_123
        ).get()
        #expect(page.signedPayloads == ["a.b.c"])
        #expect(page.hasMore)
        #expect(page.paginationToken == "next")
        #expect(page.notificationHistory.first?.sendAttempts?.first?.sendAttemptResult == "SUCCESS")
    }

    @Test func applesRefusalsAreNamed() throws {
        var limited = HTTPHeaders()
        limited.add(name: "Retry-After", value: "1735689600000")
        let server = try FakeHistoryServer(responses: [
            HTTPResponse(status: HTTPStatus(code: 401, reasonPhrase: "Unauthorized")),
            HTTPResponse(status: HTTPStatus(code: 429, reasonPhrase: "Too Many"), headers: limited),
            HTTPResponse(status: .badRequest, body: Array(#"{"errorCode":4000030}"#.utf8)),
            HTTPResponse(status: HTTPStatus(code: 503, reasonPhrase: "Unavailable")),
            HTTPResponse(status: .ok, body: Array("[]".utf8)),
            // More waits, but not where: read as the last page, the rest of the window would never be fetched.
            HTTPResponse(status: .ok, body: Array(#"{"notificationHistory":[],"hasMore":true}"#.utf8)),
            HTTPResponse(
                status: .ok,
                body: Array(#"{"notificationHistory":[],"hasMore":true,"paginationToken":""}"#.utf8)
            ),
        ])
        defer { server.stop() }
        let client = client(server, key: try ES256Key.generate())
        func call() -> AppStoreServerAPIClient.Failure? {
            switch client.notificationHistory(
                .externalPurchaseTokens(from: 1, to: 2),
                environment: .production,
                bundleId: "com.example",
                now: 1_735_000_000_123
            ) {
            case .success: nil
            case .failure(let failure): failure
            }
        }
        #expect(call() == .unauthorized)
        // Apple's time is more than an hour off: the wait is an hour (`RetryAfter.longestWaitMilliseconds`).
        #expect(call() == .rateLimited(retryAt: 1_735_000_000_123 + 3_600_000))
        #expect(call() == .rejected(status: 400, body: #"{"errorCode":4000030}"#))
        #expect(call() == .serverError(status: 503, body: ""))
        #expect(call() == .malformedResponse("not a NotificationHistoryResponse"))
        #expect(call() == .malformedResponse("hasMore without a paginationToken"))
        #expect(call() == .malformedResponse("hasMore without a paginationToken"))
    }

    /// An item that is no notification is skipped, the rest of its page read: it threw the whole page away, the
    /// valid notifications with it, and the window failed alike on every try.
    @Test func anItemThatIsNoNotificationIsSkippedAndTheRestRead() throws {
        let body =
            #"{"notificationHistory": [{"signedPayload": 5}, {"signedPayload": "a.b.c", "sendAttempts": [{"attemptDate": "soon"}]}, {}], "hasMore": false}"#
        guard case .success(let page) = AppStoreServerAPIClient.page(Array(body.utf8)) else {
            Issue.record("the page was refused")
            return
        }
        #expect(page.signedPayloads == ["a.b.c"])
        #expect(page.skippedItems == 2)
        // Nothing but such items is another shape than Apple's: read as empty, the window would be done.
        let junk = #"{"notificationHistory": [{"payload": "a.b.c"}], "hasMore": false}"#
        guard case .failure(let failure) = AppStoreServerAPIClient.page(Array(junk.utf8)) else {
            Issue.record("a page of no notification was read")
            return
        }
        #expect(failure == .malformedResponse("no item of the page is a notification"))
    }

    /// A page that names itself as the next was fetched again and again, to the page limit.
    @Test func aPageThatNamesItselfAsTheNextIsMalformed() throws {
        let server = try FakeHistoryServer(responses: [
            try FakeHistoryServer.page([], hasMore: true, paginationToken: "same"),
            try FakeHistoryServer.page([], hasMore: true, paginationToken: "same"),
        ])
        defer { server.stop() }
        let result = client(server, key: try ES256Key.generate()).allNotificationHistory(
            .externalPurchaseTokens(from: 1, to: 2),
            environment: .production,
            bundleId: "com.example",
            now: { 1_735_000_000_123 }
        )
        guard case .failure(let failure) = result else {
            Issue.record("the loop was taken as a history")
            return
        }
        #expect(failure == .malformedResponse("hasMore with the paginationToken that asked for the page"))
        #expect(server.received.count == 2)
    }

    @Test func noServerIsANetworkError() throws {
        // Port 1 on loopback refuses at once.
        let client = AppStoreServerAPIClient(
            credentials: AppStoreJWT.Credentials(issuerId: "i", keyId: "k", key: try ES256Key.generate()),
            productionURL: "http://127.0.0.1:1",
            httpClient: HTTPClient()
        )
        let result = client.notificationHistory(
            .externalPurchaseTokens(from: 1, to: 2),
            environment: .production,
            bundleId: "com.example",
            now: 1_735_000_000_123
        )
        guard case .failure(.networkError) = result else {
            Issue.record("expected a network error, got \(result)")
            return
        }
    }

    /// A failure names the start of the answer on one line: a proxy's HTML error page was printed and logged whole.
    @Test func aFailureShowsTheStartOfALongAnswer() {
        let page =
            "<!doctype html>\n<html>\n  <body>" + String(repeating: "Not Implemented ", count: 400) + "</body></html>"
        let shown = AppStoreServerAPIClient.Failure.serverError(status: 501, body: page).description
        #expect(shown.hasPrefix("server error (501): <!doctype html> <html> <body>Not Implemented"))
        #expect(shown.count < 400)
        #expect(shown.hasSuffix("… (\(page.utf8.count) bytes)"))
        let apple = #"{"errorCode":4000006,"errorMessage":"Invalid request."}"#
        #expect(
            AppStoreServerAPIClient.Failure.rejected(status: 400, body: apple).description == "rejected (400): " + apple
        )
    }
}
