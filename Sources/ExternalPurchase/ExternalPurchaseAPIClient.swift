public import Domain
import Foundation
public import Outbound

/// Apple's External Purchase Server API over libcurl: `PUT /externalPurchase/v1/reports` and
/// `GET /externalPurchase/v1/reports/{requestIdentifier}`, on the production or sandbox host by the token's
/// environment, with a fresh ES256 JWT per request (Apple: "Generate a new signed JWT for each new request").
public struct ExternalPurchaseAPIClient: Sendable {
    /// What a send came to, as the reporting service needs to decide what to do next.
    public enum Outcome: Sendable, Equatable {
        /// 200: "The report was received and passed validation checks successfully."
        case accepted
        /// 400: the whole report was refused; Apple's `errors` (or the raw body) kept for the operator.
        case rejected(body: String)
        /// 401: the JWT (so the key or its IDs) is wrong; retrying cannot help.
        case unauthorized
        /// 429, with the moment Apple allows the next try when it said (UNIX ms).
        case rateLimited(retryAt: Int64?)
        /// 5xx or another status: try again later.
        case serverError(status: Int, body: String)
        /// No HTTP answer (refused, TLS, timeout).
        case networkError(String)
        /// The request could not be signed (the key cannot sign): nothing was sent, and retrying cannot help.
        case signingFailed(String)
    }

    public var credentials: AppStoreJWT.Credentials
    public var productionURL: String
    public var sandboxURL: String
    public var httpClient: HTTPClient

    public init(credentials: AppStoreJWT.Credentials, productionURL: String, sandboxURL: String, httpClient: HTTPClient)
    {
        self.credentials = credentials
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.httpClient = httpClient
    }

    /// The host for an environment; sandbox tokens are reported only to the sandbox host.
    public func baseURL(_ environment: Environment) -> String {
        let base = environment == .sandbox ? sandboxURL : productionURL
        return base.hasSuffix("/") ? String(base.dropLast()) : base
    }

    /// Sends a report (already validated). `body` is the exact JSON to send, so a retry sends the same bytes.
    /// `now` (UNIX ms, the caller's clock) dates the JWT and anchors a `Retry-After` given in seconds.
    public func send(
        body: [UInt8],
        requestIdentifier: RequestIdentifier,
        environment: Environment,
        bundleId: BundleID,
        now: Int64
    ) -> Outcome {
        let request: HTTPClientRequest
        do {
            request = try AppleAPIRequest.signed(
                "PUT",
                url: baseURL(environment) + "/externalPurchase/v1/reports",
                body: body,
                credentials: credentials,
                bundleId: bundleId,
                now: now
            )
        } catch {
            return .signingFailed("cannot sign the request: \(error)")
        }
        let response: HTTPClientResponse
        do {
            response = try httpClient.perform(request)
        } catch {
            return .networkError(error.description)
        }
        return Self.outcome(
            status: response.status,
            body: response.body,
            retryAfter: response.header("retry-after"),
            now: now,
            sent: requestIdentifier
        )
    }

    /// What Apple's answer to a send says: its status, its body (the first 64 KiB, as text) and `Retry-After`.
    /// A 200 is Apple's only as a JSON object naming `sent` (Apple's `SendReportSuccessResponse` requires the
    /// `requestIdentifier`: "(Required) The UUID that you generated"): an HTML page, `{}` or another report's answer
    /// (a proxy, a misrouted URL) says nothing of this one, which then goes again under its identifier, as after a
    /// lost answer; a report Apple did take is then answered "duplicate request" and settled with Retrieve.
    package static func outcome(
        status: Int,
        body: [UInt8],
        retryAfter: String?,
        now: Int64,
        sent: RequestIdentifier
    ) -> Outcome {
        let text = String(decoding: body.prefix(64 * 1024), as: UTF8.self)
        switch status {
        case 200:
            guard let answer = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any],
                (answer["requestIdentifier"] as? String)?.lowercased() == sent.rawValue.lowercased()
            else { return .serverError(status: status, body: text) }
            return .accepted
        case 400: return .rejected(body: text)
        case 401: return .unauthorized
        case 429: return .rateLimited(retryAt: RetryAfter.unixMilliseconds(retryAfter, now: now))
        default: return .serverError(status: status, body: text)
        }
    }

    /// Apple's copy of a report (Retrieve External Purchase Report): the HTTP status and body, or the error.
    public func retrieve(
        requestIdentifier: RequestIdentifier,
        environment: Environment,
        bundleId: BundleID,
        now: Int64
    ) -> Result<(status: Int, body: String), HTTPClientError> {
        guard UUID(uuidString: requestIdentifier.rawValue) != nil else {
            return .failure(HTTPClientError(kind: .other, code: -1, message: "requestIdentifier is not a UUID"))
        }
        let request: HTTPClientRequest
        do {
            request = try AppleAPIRequest.signed(
                "GET",
                url: baseURL(environment) + "/externalPurchase/v1/reports/" + requestIdentifier.rawValue,
                credentials: credentials,
                bundleId: bundleId,
                now: now
            )
        } catch {
            return .failure(HTTPClientError(kind: .other, code: -1, message: "cannot sign the request: \(error)"))
        }
        do {
            let response = try httpClient.perform(request)
            return .success((response.status, String(decoding: response.body.prefix(256 * 1024), as: UTF8.self)))
        } catch {
            return .failure(error)
        }
    }
}
