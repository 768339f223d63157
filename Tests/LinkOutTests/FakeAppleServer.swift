import Crypto
import Dispatch
import Domain
import ExternalPurchase
import Foundation
import HTTPServer
import Logging
import Synchronization

/// A stand-in for Apple's External Purchase Server API on 127.0.0.1, reached through the real libcurl client.
/// It verifies each request's ES256 JWT against the public half of the test's key, checks the body against
/// Apple's rules, and answers as scripted: 200, 400 with errors, 401, 429 with or without Retry-After, 500, or
/// a hang.
final class FakeAppleServer: Sendable {
    enum Behavior: Sendable {
        case respond(status: Int, headers: [String: String] = [:], body: String = "")
        /// Sleeps this long before answering 200, so the client's timeout fires first.
        case hang(milliseconds: UInt32)
        /// Keeps the report (Retrieve finds it) but answers this: Apple's "duplicate request" for a report it
        /// accepted while its 200 was lost.
        case holdAndRespond(status: Int, body: String)

        static let ok = Behavior.respond(status: 200)
    }

    struct Received: Sendable {
        var path: String
        /// The raw `Authorization` value (tests search logs for it).
        var authorization: String
        var jwtHeader: [String: String]
        var claims: [String: JSONValueLike]
        var signatureValid: Bool
        var body: [UInt8]
        var report: ExternalPurchaseReport?
        var problems: [ReportProblem]

        var bodyObject: [String: Any]? {
            (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
        }
    }

    /// Claims as strings or integers.
    enum JSONValueLike: Sendable, Equatable {
        case string(String)
        case integer(Int64)
    }

    /// What the route handler shares with the test.
    private final class Shared: Sendable {
        let script = Mutex<[Behavior]>([])
        let log = Mutex<[Received]>([])
        let arrivals = DispatchSemaphore(value: 0)
        /// Decides the answer per request when set (before the script): nil falls through to the script.
        let decide = Mutex<(@Sendable (Received) -> Behavior?)?>(nil)
        /// The reports answered 200 (by requestIdentifier): only these can be retrieved, as at Apple ("a report
        /// that you successfully submitted").
        let held = Mutex<[String: [UInt8]]>([:])
        let retrieves = Mutex<Int>(0)
        /// Answer 401 to a JWT the test's key did not sign, as Apple does, before any script.
        let checksSignatures = Mutex(false)
    }

    let port: Int
    let publicKey: ES256Key
    private let server: HTTPServer
    private let shared = Shared()

    init(publicKey: ES256Key) throws {
        self.publicKey = publicKey
        var configuration = HTTPServer.Configuration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.eventLoopCount = 1
        configuration.workerThreads = 4
        let shared = self.shared
        var router = Router()
        router.add("PUT", "/externalPurchase/v1/reports") { request in
            // Apple checks a report against what it holds for the token already (a refund may reference a buy
            // reported earlier), so the fake does too.
            let received = shared.log.withLock { log in
                log.append(Self.inspect(request, publicKey: publicKey, history: log))
                return log[log.count - 1]
            }
            defer { shared.arrivals.signal() }
            if !received.signatureValid && shared.checksSignatures.withLock({ $0 }) {
                return HTTPResponse(status: HTTPStatus(code: 401, reasonPhrase: "Unauthorized"))
            }
            let decided = shared.decide.withLock { $0 }.flatMap { $0(received) }
            let behavior = decided ?? shared.script.withLock { $0.isEmpty ? Behavior.ok : $0.removeFirst() }
            if let id = received.report?.requestIdentifier {
                switch behavior {
                case .respond(let status, _, _) where status == 200:
                    shared.held.withLock { $0[id.rawValue] = request.body }
                case .hang, .holdAndRespond: shared.held.withLock { $0[id.rawValue] = request.body }
                default: break
                }
            }
            switch behavior {
            case .respond(let status, let headers, let body):
                var fields = HTTPHeaders()
                for (name, value) in headers { fields.add(name: name, value: value) }
                fields.add(name: "Content-Type", value: "application/json")
                // Apple's SendReportSuccessResponse names the report it took.
                let taken = received.report.map { #"{"requestIdentifier":"\#($0.requestIdentifier)"}"# } ?? "{}"
                let answer = status == 200 && body.isEmpty ? taken : body
                return HTTPResponse(
                    status: HTTPStatus(code: status, reasonPhrase: "Scripted"),
                    headers: fields,
                    body: Array(answer.utf8)
                )
            case .holdAndRespond(let status, let body):
                return HTTPResponse(status: HTTPStatus(code: status, reasonPhrase: "Scripted"), body: Array(body.utf8))
            case .hang(let milliseconds):
                usleep(milliseconds * 1000)
                return HTTPResponse(status: .ok, body: Array("{}".utf8))
            }
        }
        router.get("/externalPurchase/v1/reports/{id}") { request in
            let id = request.pathParameters["id"] ?? ""
            shared.retrieves.withLock { $0 += 1 }
            if shared.checksSignatures.withLock({ $0 }),
                !Self.inspect(request, publicKey: publicKey, history: []).signatureValid
            {
                return HTTPResponse(status: HTTPStatus(code: 401, reasonPhrase: "Unauthorized"))
            }
            let known = shared.held.withLock { $0[id] }
            guard let known else {
                let notFound =
                    #"{"errors":[{"errorCode":4040001,"errorMessage":"NotFoundError","fieldName":"requestIdentifier"}]}"#
                return HTTPResponse(status: .badRequest, body: Array(notFound.utf8))
            }
            return HTTPResponse(status: .ok, body: Array(#"{"report":"#.utf8) + known + Array("}".utf8))
        }
        server = HTTPServer(
            configuration: configuration,
            router: router,
            logger: Logger(label: "fake-apple", level: .critical)
        )
        port = try server.start()
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    func enqueue(_ behaviors: Behavior...) {
        shared.script.withLock { $0.append(contentsOf: behaviors) }
    }

    var received: [Received] { shared.log.withLock { $0 } }

    /// Answers each request as `decide` says (nil: the script, then 200), e.g. a share of rejections.
    func respond(with decide: @escaping @Sendable (Received) -> Behavior?) {
        shared.decide.withLock { $0 = decide }
    }

    /// Retrieve External Purchase Report calls answered so far.
    var retrieveCount: Int { shared.retrieves.withLock { $0 } }

    /// A `400` with Apple's `SendReportErrorResponse` (Apple: "Error messages and codes"). The numeric codes are made
    /// up: Apple does not publish them, and linkout must not depend on them.
    static func rejection(_ errors: [SendReportErrorResponse.Failure]) -> Behavior {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let body = (try? encoder.encode(SendReportErrorResponse(errors: errors))).map {
            String(decoding: $0, as: UTF8.self)
        }
        return .respond(status: 400, body: body ?? "")
    }

    /// Realistic error objects, as Apple names them.
    enum AppleError {
        static func incorrectNetAmount(_ lineItemId: String) -> SendReportErrorResponse.Failure {
            .init(
                errorCode: 4_000_017,
                errorMessage: "IncorrectNetAmountError: netAmountTaxExclusive does not match the line item's amounts",
                fieldName: "netAmountTaxExclusive",
                lineItemId: LineItemID(lineItemId)
            )
        }

        static func outOfRange(_ lineItemId: String) -> SendReportErrorResponse.Failure {
            .init(
                errorCode: 4_000_041,
                errorMessage: "LineItemCreationDateOutOfRangeError: creationDate is outside the token's active range",
                fieldName: "creationDate",
                lineItemId: LineItemID(lineItemId)
            )
        }

        static let simultaneous = SendReportErrorResponse.Failure(
            errorCode: 4_000_036,
            errorMessage: "SimultaneousSubmissionError: one or more simultaneous submissions of reports reference "
                + "the same data"
        )

        static let duplicateTokenNotAllowed = SendReportErrorResponse.Failure(
            errorCode: 4_000_042,
            errorMessage: "DuplicateTokenStatusNotAllowedError: DUPLICATE_TOKEN is allowed only for custom link tokens",
            fieldName: "status"
        )

        static let statusRegression = SendReportErrorResponse.Failure(
            errorCode: 4_000_029,
            errorMessage: "LineItemStatusRegressionError: the token was reported with line items",
            fieldName: "status"
        )

        static let duplicateRequest = SendReportErrorResponse.Failure(
            errorCode: 4_000_001,
            errorMessage: "Duplicate request",
            fieldName: "requestIdentifier"
        )
    }

    /// From now on, a request whose JWT the test's key did not sign gets 401 (a wrong or rotated-away key).
    func checkSignatures() {
        shared.checksSignatures.withLock { $0 = true }
    }

    /// Waits for the next request to be answered (bounded, so a broken client fails the test instead of hanging).
    func waitForRequest(seconds: Int = 10) -> Bool {
        shared.arrivals.wait(timeout: .now() + .seconds(seconds)) == .success
    }

    func stop() {
        server.shutdown(gracePeriod: .seconds(1))
    }

    private static func inspect(_ request: HTTPRequest, publicKey: ES256Key, history: [Received]) -> Received {
        var header: [String: String] = [:]
        var claims: [String: JSONValueLike] = [:]
        var valid = false
        if let authorization = request.headers["authorization"], authorization.hasPrefix("Bearer ") {
            let parts = authorization.dropFirst(7).split(separator: ".", omittingEmptySubsequences: false)
            if parts.count == 3, let headerBytes = Base64URL.decode(parts[0].utf8),
                let claimBytes = Base64URL.decode(parts[1].utf8), let signature = Base64URL.decode(parts[2].utf8)
            {
                let headerObject = (try? JSONSerialization.jsonObject(with: Data(headerBytes))) as? [String: Any] ?? [:]
                for (key, value) in headerObject { header[key] = "\(value)" }
                let claimObject = (try? JSONSerialization.jsonObject(with: Data(claimBytes))) as? [String: Any] ?? [:]
                for (key, value) in claimObject {
                    if let text = value as? String {
                        claims[key] = .string(text)
                    } else if let number = value as? Int64 {
                        claims[key] = .integer(number)
                    } else if let number = value as? Int {
                        claims[key] = .integer(Int64(number))
                    }
                }
                valid = publicKey.verify(signature, message: Array((parts[0] + "." + parts[1]).utf8))
            }
        }
        let report = try? JSONDecoder().decode(ExternalPurchaseReport.self, from: Data(request.body))
        let earlier = history.compactMap(\.report).filter { $0.externalPurchaseId == report?.externalPurchaseId }
            .flatMap { $0.lineItems ?? [] }
        let problems =
            report.map {
                ReportValidator(token: nil, earlierLineItems: earlier, now: Int64(Date().timeIntervalSince1970 * 1000))
                    .problems(in: $0)
            } ?? [ReportProblem("InvalidBodyError", "not an ExternalPurchaseReport")]
        return Received(
            path: String(request.path),
            authorization: request.headers["authorization"] ?? "",
            jwtHeader: header,
            claims: claims,
            signatureValid: valid,
            body: request.body,
            report: report,
            problems: problems
        )
    }
}
