import Domain
import Outbound

/// A request to one of Apple's server APIs (External Purchase, App Store Server): a fresh ES256 JWT per request
/// (Apple: "Generate a new signed JWT for each new request"), JSON in and out.
enum AppleAPIRequest {
    static func signed(
        _ method: String,
        url: String,
        body: [UInt8]? = nil,
        credentials: AppStoreJWT.Credentials,
        bundleId: BundleID,
        now: Int64
    ) throws -> HTTPClientRequest {
        // `now` is the caller's clock (UNIX ms): the JWT's issue and expiry times come from it.
        let jwt = try AppStoreJWT.make(credentials: credentials, bundleId: bundleId, now: now / 1000)
        var headers = [("Authorization", "Bearer " + jwt), ("Accept", "application/json")]
        if body != nil { headers.append(("Content-Type", "application/json")) }
        return HTTPClientRequest(method: method, url: url, headers: headers, body: body)
    }
}
