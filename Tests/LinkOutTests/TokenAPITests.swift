import Domain
import Foundation
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// `POST /v1/tokens` (the app, unauthenticated) and `POST /v1/backend/tokens` (the developer's backend, bearer)
/// over real sockets: who may bind a token to an `appAccountToken`, and bodies that name a key twice.
@Suite("Token API")
struct TokenAPITests {
    static let owner = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
    static let squatter = "11111111-2222-4333-8444-555555555555"
    static let other = "99999999-8888-4777-8666-555555555555"
    static let backendToken = "backend-secret"
    static let id = "SANDBOX_00000000-0000-0000-0000-000000000000"

    static func body(_ account: String?) -> String {
        guard let account else { return #"{"token": "\#(AppleVectors.v3)"}"# }
        return #"{"token": "\#(AppleVectors.v3)", "appAccountToken": "\#(account)"}"#
    }

    static func fromApp(_ live: LiveApplication, _ account: String?) throws -> RawClient.Response {
        try live.post("/v1/tokens", contentType: "application/json", body: body(account))
    }

    static func fromBackend(_ live: LiveApplication, _ account: String?, bearer: String = backendToken) throws
        -> RawClient.Response
    {
        try live.post(
            "/v1/backend/tokens",
            contentType: "application/json",
            body: body(account),
            headers: ["Authorization": "Bearer \(bearer)"]
        )
    }

    static func errorCode(_ response: RawClient.Response) throws -> String? {
        try JSONDecoder().decode([String: [String: String]].self, from: Data(response.body))["error"]?["code"]
    }

    static func boundAccount(_ live: LiveApplication) throws -> String? {
        try live.ledger().tokens.token(ExternalPurchaseID(id))?.appAccountToken
    }

    /// Whoever forwards a token first binds it (the route cannot know who is asking); a different account later
    /// is told so with a 409 instead of a 200 that changed nothing.
    @Test func theAppsFirstBindingHoldsAndAnotherAccountGets409() throws {
        let live = try LiveApplication()
        #expect(try Self.fromApp(live, Self.squatter).status == 201)
        #expect(try Self.fromApp(live, Self.squatter).status == 200)
        #expect(try Self.fromApp(live, nil).status == 200)
        let conflict = try Self.fromApp(live, Self.owner)
        #expect(conflict.status == 409)
        #expect(conflict.header("Content-Type") == "application/json")
        #expect(try Self.errorCode(conflict) == "account_conflict")
        let message = try JSONDecoder().decode([String: [String: String]].self, from: Data(conflict.body))
        #expect(message["error"]?["message"]?.isEmpty == false)
        #expect(!conflict.text.contains(Self.squatter), "never tells a caller whose account holds the token")
        #expect(try Self.boundAccount(live) == Self.squatter)
        // The same account in other letters is the same account.
        #expect(try Self.fromApp(live, Self.squatter.uppercased()).status == 200)
    }

    /// The backend's binding is authoritative: it replaces the app's (a squatter's) and is logged; after it, the
    /// app cannot move the token, and the backend itself gets a 409 for another account.
    @Test func theBackendsBindingReplacesTheAppsAndHolds() throws {
        let live = try LiveApplication { $0.apiToken = Self.backendToken }
        #expect(try Self.fromApp(live, Self.squatter).status == 201)
        let replaced = try Self.fromBackend(live, Self.owner)
        #expect(replaced.status == 200)
        let reply = try JSONDecoder().decode([String: String].self, from: Data(replaced.body))
        #expect(reply["externalPurchaseId"] == Self.id)
        #expect(reply["environment"] == "sandbox")
        #expect(reply["checkoutURL"]?.hasPrefix("http://localhost:8080/checkout/") == true)
        #expect(try Self.boundAccount(live) == Self.owner)
        let logged = live.logLines.all.filter { $0.contains("backend replaced the app's appAccountToken binding") }
        #expect(logged.count == 1)
        #expect(logged.first?.contains(Self.id) == true)
        #expect(!live.logLines.all.joined().contains(AppleVectors.v3))

        #expect(try Self.fromApp(live, Self.squatter).status == 409)
        #expect(try Self.fromApp(live, Self.owner).status == 200)
        #expect(try Self.fromBackend(live, Self.owner).status == 200)
        let backendConflict = try Self.fromBackend(live, Self.other)
        #expect(backendConflict.status == 409)
        #expect(try Self.errorCode(backendConflict) == "account_conflict")
        #expect(try Self.boundAccount(live) == Self.owner)
        #expect(try live.ledger().tokens.token(ExternalPurchaseID(Self.id))?.source == .app)
    }

    /// A token the backend forwards first is recorded like the app's (201) and bound on the backend's word: the
    /// app's later binding of the same account is fine, another account a 409.
    @Test func theBackendRouteRecordsNewTokensAndIsGuarded() throws {
        let live = try LiveApplication {
            $0.apiToken = Self.backendToken
            $0.server.trustedProxies = ["127.0.0.1"]
        }
        let created = try Self.fromBackend(live, Self.owner)
        #expect(created.status == 201)
        #expect(try Self.fromBackend(live, Self.owner).status == 200)
        #expect(try Self.fromApp(live, Self.squatter).status == 409)
        #expect(try Self.boundAccount(live) == Self.owner)
        let badAccount = try Self.fromBackend(live, "nope")
        #expect(badAccount.status == 400)
        #expect(try Self.errorCode(badAccount) == "invalid_app_account_token")
        let wrongType = try live.post(
            "/v1/backend/tokens",
            contentType: "text/plain",
            body: Self.body(nil),
            headers: ["Authorization": "Bearer \(Self.backendToken)"]
        )
        #expect(wrongType.status == 415)
        // The media type is compared whole: a type that only starts like JSON is not JSON.
        for lookalike in ["application/jsonp", "application/json-patch+json"] {
            let answer = try live.post(
                "/v1/backend/tokens",
                contentType: lookalike,
                body: Self.body(nil),
                headers: ["Authorization": "Bearer \(Self.backendToken)"]
            )
            #expect(answer.status == 415, "\(lookalike)")
        }
        let withCharset = try live.post(
            "/v1/backend/tokens",
            contentType: "Application/JSON; charset=utf-8",
            body: Self.body(nil),
            headers: ["Authorization": "Bearer \(Self.backendToken)"]
        )
        #expect(withCharset.status != 415)
        // Every body is read as UTF-8: one declared in another charset is not the type it names.
        let otherCharset = try live.post(
            "/v1/backend/tokens",
            contentType: "application/json; charset=\"UTF-16\"",
            body: Self.body(nil),
            headers: ["Authorization": "Bearer \(Self.backendToken)"]
        )
        #expect(otherCharset.status == 415)

        let unauthorized = try Self.fromBackend(live, Self.other, bearer: "guess")
        #expect(unauthorized.status == 401)
        #expect(unauthorized.header("WWW-Authenticate") == "Bearer")
        #expect(try Self.boundAccount(live) == Self.owner)
        // The same failed-auth throttle as the other bearer routes: ten refusals, then 429 even with the right one.
        func guess(_ attempt: Int) throws -> RawClient.Response {
            try live.post(
                "/v1/backend/tokens",
                contentType: "application/json",
                body: Self.body(Self.other),
                headers: ["Authorization": "Bearer guess-\(attempt)", "X-Forwarded-For": "203.0.113.7"]
            )
        }
        for attempt in 0..<10 { #expect(try guess(attempt).status == 401) }
        #expect(try guess(10).status == 429)
        let right = try live.post(
            "/v1/backend/tokens",
            contentType: "application/json",
            body: Self.body(Self.owner),
            headers: ["Authorization": "Bearer \(Self.backendToken)", "X-Forwarded-For": "203.0.113.7"]
        )
        #expect(right.status == 429)

        let off = try LiveApplication()
        let disabled = try Self.fromBackend(off, Self.owner)
        #expect(disabled.status == 404)
        #expect(try Self.errorCode(disabled) == "disabled")
        #expect(try off.ledger().tokens.count(.tokens) == 0)
    }

    /// A key named twice: JSONDecoder keeps one of the values, and which one differs between readers.
    @Test(
        "bodies that name a key twice get a 400 and change nothing",
        arguments: [
            (
                "/v1/tokens",
                #"{"token": "\#(AppleVectors.v3)", "appAccountToken": "\#(TokenAPITests.owner)", "appAccountToken": "\#(TokenAPITests.squatter)"}"#,
                "\"appAccountToken\""
            ),
            ("/v1/tokens", #"{"token": "!!", "token": "\#(AppleVectors.v3)"}"#, "\"token\""),
            ("/v1/backend/tokens", #"{"token": "\#(AppleVectors.v3)", "tok\u0065n": "x"}"#, "\"token\""),
            ("/v1/backend/tokens", #"{"token": "\#(AppleVectors.v3)", "<b>": 1, "<b>": 2}"#, "a key"),
            ("/v1/redemptions", #"{"code": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "code": "b"}"#, "\"code\""),
            // In a nested object too: every reader of the body must read the same thing.
            ("/v1/tokens", #"{"token": "\#(AppleVectors.v3)", "x": {"a": 1, "a": 2}}"#, "a key"),
        ]
    )
    func duplicateKeys(path: String, body: String, named: String) throws {
        let (live, response) = try Self.postAsBackend(path, body)
        #expect(response.status == 400)
        #expect(try Self.errorCode(response) == "duplicate_key")
        #expect(response.text.contains(#"The body names \#(named.replacingOccurrences(of: "\"", with: "\\\"")) more"#))
        #expect(!response.text.contains("<b>"))
        #expect(try live.ledger().tokens.count(.tokens) == 0)
    }

    @Test(
        "a body outside JSON's grammar (a comma before a closing bracket, a raw tab, an unknown escape) is not JSON",
        arguments: [
            ("/v1/tokens", #"{"token": "\#(AppleVectors.v3)",}"#, "invalid_body"),
            ("/v1/redemptions", #"{"code": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",}"#, "invalid_body"),
            ("/v1/tokens", #"{"token": "\#(AppleVectors.v3)", "x": [1,]}"#, "invalid_body"),
            ("/v1/tokens", "{\"token\": \"\(AppleVectors.v3)\", \"x\": \"a\tb\"}", "invalid_body"),
            ("/v1/tokens", #"{"token": "\#(AppleVectors.v3)", "x": "\x41"}"#, "invalid_body"),
            (
                "/v1/tokens",
                #"{"token": "\#(AppleVectors.v3)", "x": "# + String(repeating: "[", count: 40) + "1,"
                    + String(repeating: "]", count: 40) + "}", "invalid_body"
            ),
        ]
    )
    func trailingCommas(path: String, body: String, code: String) throws {
        let (live, response) = try Self.postAsBackend(path, body)
        #expect(response.status == 400)
        #expect(try Self.errorCode(response) == code)
        #expect(try live.ledger().tokens.count(.tokens) == 0)
    }

    /// UTF-16 (its NUL bytes): Foundation's reader takes it, and a key named twice went past the check that reads
    /// UTF-8. Refused as not JSON (RFC 8259 §8.1), whatever the body holds. A UTF-8 byte order mark is read past,
    /// by the check as by the reader: a key named twice behind it is refused as such.
    @Test(
        "a body not in UTF-8 is not JSON, on every JSON route",
        arguments: [
            ("/v1/tokens", Self.utf16LE(#"{"token": "!!", "token": "\#(AppleVectors.v3)"}"#), "invalid_body"),
            ("/v1/tokens", Self.utf16BE(#"{"token": "\#(AppleVectors.v3)",}"#), "invalid_body"),
            ("/v1/tokens", "\u{FEFF}" + #"{"token": "!!", "token": "\#(AppleVectors.v3)"}"#, "duplicate_key"),
            ("/v1/backend/tokens", Self.utf16LE(#"{"token": "\#(AppleVectors.v3)"}"#), "invalid_body"),
            ("/v1/redemptions", Self.utf16LE(#"{"code": "a", "code": "b"}"#), "invalid_body"),
        ]
    )
    func bodiesNotInUTF8(path: String, body: String, code: String) throws {
        let (live, response) = try Self.postAsBackend(path, body)
        #expect(response.status == 400)
        #expect(try Self.errorCode(response) == code, "\(response.text)")
        #expect(try live.ledger().tokens.count(.tokens) == 0)
    }

    /// A backend that writes a byte order mark before its JSON (older .NET, PowerShell) is read as before.
    @Test func aBodyBehindAByteOrderMarkIsTaken() throws {
        let (live, response) = try Self.postAsBackend("/v1/tokens", "\u{FEFF}" + #"{"token": "\#(AppleVectors.v3)"}"#)
        #expect((200..<300).contains(response.status), "\(response.status) \(response.text)")
        #expect(try live.ledger().tokens.count(.tokens) == 1)
    }

    /// ASCII `text` as UTF-16 code units, little or big end first: each character beside a NUL byte.
    static func utf16LE(_ text: String) -> String { String(text.flatMap { [$0, "\u{0}"] }) }
    static func utf16BE(_ text: String) -> String { String(text.flatMap { ["\u{0}", $0] }) }

    /// A JSON body posted to `path` by the backend, on a server of its own.
    static func postAsBackend(_ path: String, _ body: String) throws -> (LiveApplication, RawClient.Response) {
        let live = try LiveApplication { $0.apiToken = Self.backendToken }
        let response = try live.post(
            path,
            contentType: "application/json",
            body: body,
            headers: ["Authorization": "Bearer \(Self.backendToken)"]
        )
        return (live, response)
    }
}
