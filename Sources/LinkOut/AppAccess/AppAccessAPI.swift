import Domain
import Foundation
import HTTPServer
import Lifecycle
import Logging
import Storage

/// Apps without a backend: `POST /v1/app/redemptions` takes the code from the return link (no bearer: the code
/// is the credential) and answers the purchase, a signed entitlement and a customer credential;
/// `GET /v1/app/entitlements` answers the current signed entitlements for that credential; `GET
/// /.well-known/jwks.json` publishes the keys they verify with.
struct AppAccessAPI: Sendable {
    let ledger: Ledger
    let identifiers: Identifiers
    let issuer: EntitlementIssuer
    let keyring: EntitlementKeyring
    let throttles: AppAccessThrottles
    let logger: Logger
    let clock: Clock

    struct Redeemed: Encodable {
        var purchase: RedemptionAPI.PurchaseView
        var redeemedAt: Int64
        /// The signed entitlement, or nil when the purchase entitles to nothing now (refunded before redeemed).
        var entitlement: String?
        /// The customer credential for `GET /v1/app/entitlements`: shown this once, kept only as a hash.
        var credential: String
        var credentialId: String
    }

    struct Entitlements: Encodable {
        struct Entitled: Encodable {
            var purchaseId: String
            var productId: ProductID?
            var expiresDate: Int64?
            var entitlement: String
        }
        struct Ended: Encodable {
            var purchaseId: String
            var productId: ProductID?
            var reason: String
        }
        var credentialId: String
        var entitlements: [Entitled]
        var ended: [Ended]
    }

    struct KeySet: Encodable {
        var keys: [PublicJWK]
    }

    /// `POST /v1/app/redemptions` `{"code", "appAccountToken"?}`, with `Authorization: Bearer <credential>` to add
    /// the purchase to the credential the app already holds.
    func redeem(_ request: HTTPRequest) throws -> HTTPResponse {
        let client = throttles.client(of: request)
        if let refusal = throttles.clientRefusal(client) { return refusal }
        // A revoked credential is one this server issued, not a guess, and spends nothing (as on the entitlements
        // route): an app that keeps presenting it after a reissue must not lock its phone out of redeeming.
        var existing: CustomerCredential?
        if request.headers["authorization"] != nil {
            guard let held = try presentedCredential(request) else {
                throttles.clients.recordFailure(for: client)
                return BearerAuth.unauthorized()
            }
            guard held.revokedAt == nil else { return Self.revoked() }
            existing = held
        }
        let answer: HTTPResponse
        do {
            answer = try redeem(request, adding: existing)
        } catch is RevokedMeanwhile {
            // Revoked or reissued by the operator while the redemption ran: as when it is presented revoked, no
            // guess.
            return Self.revoked()
        }
        // A refusal of what the client sent counts as a guess; the server's own trouble (`503
        // signing_unavailable`) does not, or apps retrying through a key outage behind one address were locked out.
        if (400..<500).contains(answer.status.code), answer.status != .tooManyRequests {
            throttles.clients.recordFailure(for: client)
        }
        return answer
    }

    /// `existing`: the credential presented, which the purchase is added to.
    private func redeem(_ request: HTTPRequest, adding existing: CustomerCredential?) throws -> HTTPResponse {
        let body: RedemptionBody
        switch RedemptionBody.read(request) {
        case .body(let read): body = read
        case .refused(let response): return response
        }
        let codeHash = identifiers.redemptionCodeHash(body.code)
        if let refusal = throttles.codeRefusal(codeHash) { return refusal }
        guard let redemption = try ledger.entitlements.redemption(codeHash: codeHash),
            let purchase = try ledger.payments.purchase(id: redemption.purchaseId)
        else {
            return JSONResponse.error(.notFound, "unknown_code", "No purchase has this code.")
        }
        let token = try purchase.externalPurchaseId.flatMap { try ledger.tokens.token($0) }
        let bundleId = EntitlementIssuer.audience(of: purchase, token: token)
        let account = token?.appAccountToken
        // An erased person's credential takes no further purchase (README, Privacy): the code is redeemed without
        // it, for a credential of its own. Without an account on the purchase or in the body, nothing refused it,
        // and the new purchase joined the erased person's credential. No guess at the code: its tries are kept.
        if existing?.appAccountToken == PrivacyStore.erased {
            return JSONResponse.error(
                .conflict,
                "credential_erased",
                "This credential's account was erased: redeem the code without it, for a credential of its own."
            )
        }
        if let refusal = mismatch(body: body, account: account, bundleId: BundleID(bundleId), existing: existing) {
            throttles.codes.recordFailure(for: codeHash)
            return refusal
        }
        let now = clock.nowMilliseconds()
        // Everything the answer needs is ready before the code is used up: once it is, nothing may fail, or the
        // code would be gone and the credential's secret with it.
        let view = try RedemptionAPI.view(purchase, ledger: ledger, identifiers: identifiers)
        // A code issued before its account was erased makes a credential as erased as the account's others.
        let shown = try ErasedAccount.shown(body.appAccountToken ?? account, ledger: ledger, identifiers: identifiers)
        let accountErased = shown == PrivacyStore.erased
        let signed: String?
        do {
            signed = try signedEntitlement(purchase, at: now, namingAccount: !accountErased)
        } catch let refusal as AppAccessRefusal {
            // No key may sign: an answer without the entitlement reads as "entitled to nothing" (OpenAPI), and
            // the code would be gone. A code still usable stays unused, and the app asks again; a used or expired
            // one goes on to its 409 or 410 (a backend whose first answer was lost finds its purchase there).
            logger.error("entitlement not signed", ["purchase_id": purchase.purchaseId, "error": "\(refusal)"])
            if redemption.redeemedAt == nil && now <= redemption.expiresAt { return Self.signingUnavailable() }
            signed = nil
        }
        let secret = existing == nil ? Identifiers.credentialSecret() : nil
        let credentialId = existing?.id ?? "cred_" + Identifiers.random()
        let grant: CredentialGrant =
            if let secret {
                .issue(
                    CustomerCredential(
                        id: credentialId,
                        bundleId: BundleID(bundleId),
                        appAccountToken: shown,
                        createdAt: now
                    ),
                    secretHash: identifiers.credentialHash(secret)
                )
            } else {
                .extend(
                    credentialId: credentialId,
                    account: try ErasedAccount.shown(
                        account ?? body.appAccountToken,
                        ledger: ledger,
                        identifiers: identifiers
                    )
                )
            }
        switch try ledger.credentials.redeem(codeHash: codeHash, at: now, grant: grant) {
        case .success(.redeemed(let record)):
            logger.info("redeemed by the app", ["purchase_id": purchase.purchaseId, "credential_id": credentialId])
            return JSONResponse.json(
                .ok,
                Redeemed(
                    purchase: view,
                    redeemedAt: record.redeemedAt ?? now,
                    entitlement: signed,
                    credential: secret ?? BearerAuth.presented(in: request) ?? "",
                    credentialId: credentialId
                )
            )
        case .success(.alreadyRedeemed(let at, _)):
            throttles.codes.recordFailure(for: codeHash)
            return RedemptionAPI.refusal(.conflict, "already_redeemed", "This code was redeemed before.", at: at)
        case .success(.expired(let at)):
            throttles.codes.recordFailure(for: codeHash)
            return RedemptionAPI.refusal(.gone, "expired", "This code has expired; ask for help in the app.", at: at)
        case .success(.notFound):
            return JSONResponse.error(.notFound, "unknown_code", "No purchase has this code.")
        case .failure(.revoked):
            throw RevokedMeanwhile()
        // Bound to another account since it was read, by a redemption racing this one: as if it had been
        // bound before (`mismatch`).
        case .failure(.anotherAccount):
            throttles.codes.recordFailure(for: codeHash)
            return Self.credentialOfAnotherAccount()
        }
    }

    /// The credential presented was revoked after it was read and before the redemption's write.
    private struct RevokedMeanwhile: Error {}

    /// The purchase's signed entitlement, or nil when it entitles to nothing now; throws when no key may sign.
    private func signedEntitlement(_ purchase: PurchaseRecord, at now: Int64, namingAccount: Bool) throws -> String? {
        guard case .entitled(let jws, _) = try issuer.entitlement(for: purchase, at: now, namingAccount: namingAccount)
        else { return nil }
        return jws
    }

    /// No key may sign (the one in force was retired, or is a key file this configuration does not name): the
    /// operator's to fix; the app keeps what it holds and asks again later.
    static func signingUnavailable() -> HTTPResponse {
        JSONResponse.error(
            .serviceUnavailable,
            "signing_unavailable",
            "Entitlements cannot be signed right now; keep what you hold and ask again later.",
            retryAfter: 60
        )
    }

    /// A redemption that would tie the purchase to another account or app than the one it was made for.
    private func mismatch(body: RedemptionBody, account: String?, bundleId: BundleID, existing: CustomerCredential?)
        -> HTTPResponse?
    {
        if let sent = body.appAccountToken, let account, sent != account.lowercased() {
            return JSONResponse.error(
                .conflict,
                "account_mismatch",
                "The purchase was made for another appAccountToken."
            )
        }
        guard let existing else { return nil }
        if existing.bundleId != bundleId {
            return JSONResponse.error(.conflict, "app_mismatch", "The credential belongs to another app.")
        }
        if let held = existing.appAccountToken, let other = account ?? body.appAccountToken, held != other {
            return Self.credentialOfAnotherAccount()
        }
        return nil
    }

    /// A credential holds the purchases of one account: a purchase of another is refused.
    static func credentialOfAnotherAccount() -> HTTPResponse {
        JSONResponse.error(.conflict, "account_mismatch", "The credential belongs to another appAccountToken.")
    }

    /// The answer to a credential the operator revoked, on every route that takes one.
    static func revoked() -> HTTPResponse {
        var response = JSONResponse.error(
            .unauthorized,
            "credential_revoked",
            "This credential was revoked; redeem a new code or ask for help in the app."
        )
        response.headers.add(name: "WWW-Authenticate", value: "Bearer error=\"invalid_token\"")
        return response
    }

    /// `GET /v1/app/entitlements` with `Authorization: Bearer <credential>`.
    /// Unknown credentials spend the app routes' budget per client (`AppAccessThrottles`), not the admin and
    /// backend APIs': phones behind one carrier address must not lock the operator out. A revoked credential is
    /// one this server issued, not a guess, and spends nothing: an app keeps asking with it until it redeems anew.
    func entitlements(_ request: HTTPRequest) throws -> HTTPResponse {
        let client = throttles.client(of: request)
        if let refusal = throttles.clientRefusal(client) { return refusal }
        guard let credential = try presentedCredential(request) else {
            // Only a credential presented and refused is a guess (`FailedAuthThrottle.refusedAToken`).
            if BearerAuth.presented(in: request) != nil { throttles.clients.recordFailure(for: client) }
            return BearerAuth.unauthorized()
        }
        guard credential.revokedAt == nil else { return Self.revoked() }
        let now = clock.nowMilliseconds()
        var answer = Entitlements(credentialId: credential.id, entitlements: [], ended: [])
        let accountErased = credential.appAccountToken == PrivacyStore.erased
        for purchaseId in credential.purchaseIds {
            guard let purchase = try ledger.payments.purchase(id: purchaseId) else { continue }
            let decided: EntitlementIssuer.Outcome
            do {
                decided = try issuer.entitlement(for: purchase, at: now, namingAccount: !accountErased)
            } catch let refusal as AppAccessRefusal {
                logger.error("entitlement not signed", ["purchase_id": purchase.purchaseId, "error": "\(refusal)"])
                return Self.signingUnavailable()
            }
            switch decided {
            case .entitled(let jws, let claims):
                answer.entitlements.append(
                    .init(
                        purchaseId: purchaseId,
                        productId: purchase.productId,
                        expiresDate: claims.expiresDate,
                        entitlement: jws
                    )
                )
            case .notEntitled(let reason):
                answer.ended.append(.init(purchaseId: purchaseId, productId: purchase.productId, reason: reason))
            }
        }
        return JSONResponse.json(.ok, answer)
    }

    /// `GET /.well-known/jwks.json`: cacheable for a few minutes; an app that meets a `kid` it does not know
    /// fetches it again.
    func keySet(_ request: HTTPRequest) throws -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return HTTPResponse(
            status: .ok,
            headers: [
                "Content-Type": "application/jwk-set+json",
                "Cache-Control": "public, max-age=\(EntitlementKeyring.keySetMaxAgeSeconds)",
            ],
            body: Array(try encoder.encode(KeySet(keys: try keyring.publishedKeys())))
        )
    }

    /// The credential named by the bearer header, revoked or not; nil when there is none or it is unknown.
    private func presentedCredential(_ request: HTTPRequest) throws -> CustomerCredential? {
        guard let secret = BearerAuth.presented(in: request), Identifiers.isCredentialSecret(secret) else {
            return nil
        }
        return try ledger.credentials.credential(secretHash: identifiers.credentialHash(secret))
    }
}
