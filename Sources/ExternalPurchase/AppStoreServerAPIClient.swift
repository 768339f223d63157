public import Domain
import Foundation
public import Outbound

/// Apple's App Store Server API over libcurl, as far as notifications need it: Get Notification History
/// (`POST /inApps/v1/notifications/history`, Apple: "Get Notification History"). Same authentication as the External
/// Purchase Server API: a fresh ES256 JWT from the In-App Purchase key per request (Apple: "Generating JSON Web Tokens
/// for API requests", "Creating API keys to authorize API requests").
public struct AppStoreServerAPIClient: Sendable {
    /// Why a call produced no page.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// 400/404: Apple refused the query (dates beyond 180 days, type and transactionId together, …).
        case rejected(status: Int, body: String)
        /// 401: the JWT (so the key or its IDs) is wrong; retrying cannot help.
        case unauthorized
        /// 429, with the moment Apple allows the next try when it said (UNIX ms, as this API sends it; Apple:
        /// "Identifying rate limits").
        case rateLimited(retryAt: Int64?)
        /// 5xx or another status: try again later.
        case serverError(status: Int, body: String)
        /// No HTTP answer (refused, TLS, timeout), or the request could not be signed.
        case networkError(String)
        /// 200 with a body that is not a notification history page.
        case malformedResponse(String)

        public var description: String {
            switch self {
            case .rejected(let status, let body): "rejected (\(status)): \(Self.excerpt(body))"
            case .unauthorized: "unauthorized (401): the key or its IDs are wrong"
            case .rateLimited(let retryAt): "rate limited" + (retryAt.map { " until \($0)" } ?? "")
            case .serverError(let status, let body): "server error (\(status)): \(Self.excerpt(body))"
            case .networkError(let message): "network error: \(message)"
            case .malformedResponse(let message): "malformed response: \(message)"
            }
        }

        /// The start of an answer's body on one line: Apple's JSON errors are short, and a proxy's HTML error page
        /// (a whole document) was printed and logged whole.
        static func excerpt(_ body: String) -> String {
            let line = body.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            return line.count <= 300 ? line : line.prefix(300) + "… (\(body.utf8.count) bytes)"
        }
    }

    public static let defaultProductionURL = "https://api.storekit.apple.com"
    public static let defaultSandboxURL = "https://api.storekit-sandbox.apple.com"
    /// Apple's hosts of each environment: the recommended ones, and the older `itunes` ones Apple still serves
    /// (App Store Server API changelog, 2026-05-05).
    public static let productionHosts: Set<String> = ["api.storekit.apple.com", "api.storekit.itunes.apple.com"]
    public static let sandboxHosts: Set<String> = [
        "api.storekit-sandbox.apple.com", "api.storekit-sandbox.itunes.apple.com",
    ]

    public var credentials: AppStoreJWT.Credentials
    public var productionURL: String
    public var sandboxURL: String
    public var httpClient: HTTPClient

    public init(
        credentials: AppStoreJWT.Credentials,
        productionURL: String = AppStoreServerAPIClient.defaultProductionURL,
        sandboxURL: String = AppStoreServerAPIClient.defaultSandboxURL,
        httpClient: HTTPClient
    ) {
        self.credentials = credentials
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.httpClient = httpClient
    }

    public func baseURL(_ environment: Environment) -> String {
        let base = environment == .sandbox ? sandboxURL : productionURL
        return base.hasSuffix("/") ? String(base.dropLast()) : base
    }

    /// One page of notification history for `bundleId`. Pass the previous page's `paginationToken` to get the
    /// next; Apple keeps the query in the body the same across pages.
    public func notificationHistory(
        _ query: NotificationHistoryRequest,
        paginationToken: String? = nil,
        environment: Environment,
        bundleId: BundleID,
        now: Int64
    ) -> Result<NotificationHistoryResponse, Failure> {
        var url = baseURL(environment) + "/inApps/v1/notifications/history"
        if let paginationToken {
            url += "?paginationToken=" + Self.percentEncoded(paginationToken)
        }
        let request: HTTPClientRequest
        do {
            request = try AppleAPIRequest.signed(
                "POST",
                url: url,
                body: Array(try JSONEncoder().encode(query)),
                credentials: credentials,
                bundleId: bundleId,
                now: now
            )
        } catch {
            return .failure(.networkError("cannot sign the request: \(error)"))
        }
        let response: HTTPClientResponse
        do {
            response = try httpClient.perform(request)
        } catch {
            return .failure(.networkError(error.description))
        }
        let text = String(decoding: response.body.prefix(64 * 1024), as: UTF8.self)
        switch response.status {
        case 200: return Self.page(response.body, askedWith: paginationToken)
        case 400, 404: return .failure(.rejected(status: response.status, body: text))
        case 401: return .failure(.unauthorized)
        case 429:
            return .failure(
                .rateLimited(
                    retryAt: RetryAfter.unixMilliseconds(response.header("retry-after"), now: now)
                )
            )
        default: return .failure(.serverError(status: response.status, body: text))
        }
    }

    /// Every page of a query, following `paginationToken` while `hasMore`, as one list of signed payloads.
    /// `maximumPages` bounds a server that never stops saying `hasMore`.
    public func allNotificationHistory(
        _ query: NotificationHistoryRequest,
        environment: Environment,
        bundleId: BundleID,
        maximumPages: Int = 1000,
        now: @Sendable () -> Int64
    ) -> Result<[String], Failure> {
        var payloads: [String] = []
        var token: String?
        for _ in 0..<maximumPages {
            switch notificationHistory(
                query,
                paginationToken: token,
                environment: environment,
                bundleId: bundleId,
                now: now()
            ) {
            case .failure(let failure):
                return .failure(failure)
            case .success(let page):
                payloads += page.signedPayloads
                guard page.hasMore, let next = page.paginationToken, !next.isEmpty else { return .success(payloads) }
                token = next
            }
        }
        return .failure(.malformedResponse("more than \(maximumPages) pages"))
    }

    /// A page of history from the body of a 200 to a request with `askedWith` as its token. One that says more
    /// wait but not where (`hasMore` without a `paginationToken`) is malformed: read as the last page, the rest of
    /// the window would never be fetched. So is one naming its own token as the next (fetched again to the page
    /// limit, and a resumed window began there again), and one whose items are all no notification (another
    /// shape than Apple's: read as empty, the window would be done).
    package static func page(_ body: [UInt8], askedWith: String? = nil) -> Result<NotificationHistoryResponse, Failure>
    {
        let page: NotificationHistoryResponse
        do {
            page = try JSONDecoder().decode(NotificationHistoryResponse.self, from: Data(body))
        } catch {
            return .failure(.malformedResponse("not a NotificationHistoryResponse"))
        }
        guard !page.hasMore || !(page.paginationToken ?? "").isEmpty else {
            return .failure(.malformedResponse("hasMore without a paginationToken"))
        }
        guard !page.hasMore || askedWith == nil || page.paginationToken != askedWith else {
            return .failure(.malformedResponse("hasMore with the paginationToken that asked for the page"))
        }
        guard page.skippedItems == 0 || !page.notificationHistory.isEmpty else {
            return .failure(.malformedResponse("no item of the page is a notification"))
        }
        return .success(page)
    }

    /// Query-component encoding: the token is opaque and may hold `+`, `/` or `=`.
    package static func percentEncoded(_ value: String) -> String {
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }
}
