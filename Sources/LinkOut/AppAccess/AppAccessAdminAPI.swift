import Foundation
import HTTPServer
import Storage

/// `/admin/credentials…` and `/admin/signing-keys…`: the admin API's side of apps without a backend (bearer
/// `LINKOUT_ADMIN_TOKEN`), the same actions as `linkout credentials` and `linkout keys`.
struct AppAccessAdminAPI: Sendable {
    let administration: AppAccessAdministration
    let admin: AdminAPI

    struct CredentialList: Encodable {
        var credentials: [CustomerCredential]
    }

    struct Reissued: Encodable {
        var credential: CustomerCredential
        /// The new secret, shown this once: hand it to the person's app.
        var secret: String
    }

    struct KeyView: Encodable {
        var kid: String
        /// Generated into the ledger (else read from `appEntitlements.signingKeyFile`).
        var generated: Bool
        var createdAt: Int64
        var signsFrom: Int64
        var retiredAt: Int64?

        init(_ record: SigningKeyRecord) {
            kid = record.kid
            generated = record.privateKeyPEM != nil
            createdAt = record.createdAt
            signsFrom = record.signsFrom
            retiredAt = record.retiredAt
        }
    }

    struct KeyList: Encodable {
        var keys: [KeyView]
    }

    /// `GET /admin/credentials?purchaseId=`.
    func credentials(_ request: HTTPRequest) throws -> HTTPResponse {
        if let refusal = admin.authorize(request) { return refusal }
        guard let purchaseId = request.queryValue("purchaseId"), !purchaseId.isEmpty else {
            return JSONResponse.error(.badRequest, "missing_query", "Ask for ?purchaseId=<the purchase's id>.")
        }
        // No purchase id is longer (the providers' and the demo's are far shorter).
        guard purchaseId.utf8.count <= 255 else {
            return JSONResponse.error(.badRequest, "invalid_query", "A purchaseId is at most 255 bytes.")
        }
        return JSONResponse.json(
            .ok,
            CredentialList(credentials: try administration.credentials(purchaseId: purchaseId))
        )
    }

    /// `POST /admin/credentials/{credentialId}/revoke`.
    func revoke(_ request: HTTPRequest) throws -> HTTPResponse {
        if let refusal = admin.authorize(request) { return refusal }
        guard let revoked = try administration.revoke(credentialId: request.pathParameters["credentialId"] ?? "") else {
            return JSONResponse.error(.notFound, "unknown_credential", "No credential has this id.")
        }
        return JSONResponse.json(.ok, revoked)
    }

    /// `POST /admin/credentials/{credentialId}/reissue`.
    func reissue(_ request: HTTPRequest) throws -> HTTPResponse {
        if let refusal = admin.authorize(request) { return refusal }
        let reissued: (credential: CustomerCredential, secret: String)?
        do {
            reissued = try administration.reissue(credentialId: request.pathParameters["credentialId"] ?? "")
        } catch let refusal as AppAccessRefusal {
            return JSONResponse.error(.conflict, "already_replaced", refusal.description)
        }
        guard let (credential, secret) = reissued else {
            return JSONResponse.error(.notFound, "unknown_credential", "No credential has this id.")
        }
        return JSONResponse.json(.created, Reissued(credential: credential, secret: secret))
    }

    /// `GET /admin/signing-keys`.
    func keys(_ request: HTTPRequest) throws -> HTTPResponse {
        if let refusal = admin.authorize(request) { return refusal }
        return JSONResponse.json(.ok, KeyList(keys: try administration.keys().map(KeyView.init)))
    }

    /// `POST /admin/signing-keys/rotate?publishAheadSeconds=N` (default `EntitlementKeyring
    /// .defaultPublishAheadSeconds`, at most 30 days).
    func rotate(_ request: HTTPRequest) throws -> HTTPResponse {
        if let refusal = admin.authorize(request) { return refusal }
        var ahead: Int64?
        if let text = request.queryValue("publishAheadSeconds") {
            guard let value = Int64(text), (0...(30 * 86_400)).contains(value) else {
                return JSONResponse.error(
                    .badRequest,
                    "invalid_query",
                    "publishAheadSeconds is a whole number from 0 to 2592000."
                )
            }
            ahead = value
        }
        do {
            return JSONResponse.json(.created, KeyView(try administration.rotate(publishAheadSeconds: ahead)))
        } catch let refusal as AppAccessRefusal {
            return JSONResponse.error(.conflict, "key_from_file", refusal.description)
        }
    }

    /// `POST /admin/signing-keys/{kid}/retire[?force=true]`.
    func retire(_ request: HTTPRequest) throws -> HTTPResponse {
        if let refusal = admin.authorize(request) { return refusal }
        let kid = request.pathParameters["kid"] ?? ""
        guard try administration.keys().contains(where: { $0.kid == kid && $0.retiredAt == nil }) else {
            return JSONResponse.error(.notFound, "unknown_key", "No published key has this id.")
        }
        let force = request.queryValue("force")
        guard force == nil || force == "true" || force == "false" else {
            return JSONResponse.error(.badRequest, "invalid_query", "force is true or false.")
        }
        do {
            try administration.retire(kid: kid, force: force == "true")
        } catch let refusal as AppAccessRefusal {
            return JSONResponse.error(.conflict, "key_in_use", refusal.description)
        }
        return JSONResponse.json(.ok, KeyList(keys: try administration.keys().map(KeyView.init)))
    }

    // MARK: what the audit log keeps of these actions

    /// A reissue's new credential id, never its secret.
    @Sendable static func reissued(_ response: HTTPResponse) -> String? {
        ((AuditTrail.object(response)?["credential"] as? [String: Any])?["id"] as? String).map { "replaced by " + $0 }
    }

    /// A rotation's new key.
    @Sendable static func newKey(_ response: HTTPResponse) -> String? {
        (AuditTrail.object(response)?["kid"] as? String).map { "new key " + $0 }
    }

    /// A retirement, and whether it was forced (a leak): as the CLI records it.
    @Sendable static func retired(_ request: HTTPRequest) -> String {
        request.queryValue("force") == "true" ? "retired (forced)" : "retired"
    }

    /// Before an action on the credential the path names.
    @Sendable func credentialState(_ request: HTTPRequest) throws -> String? {
        try administration.credentialState(request.pathParameters["credentialId"] ?? "")
    }

    /// Before a rotation.
    @Sendable func signingState(_ request: HTTPRequest) throws -> String? {
        try administration.signingState()
    }

    /// Before a retirement of the key the path names.
    @Sendable func keyState(_ request: HTTPRequest) throws -> String? {
        try administration.keyState(request.pathParameters["kid"] ?? "")
    }
}
