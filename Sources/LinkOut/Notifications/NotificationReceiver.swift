import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Logging
import Storage

/// Takes a signed notification from wherever it came (Apple's POST, or Get Notification History), checks it the way
/// docs/apple-facts.md ("Verifying a signed notification") lays out, and stores it before anyone is told it arrived.
/// Delivery and recovery share this one path, so a notification recovered from history is judged, deduplicated and
/// acted on exactly like one Apple delivered.
struct NotificationReceiver: Sendable {
    /// What became of one signed payload.
    enum Receipt: Sendable, Equatable {
        /// New: stored, to be acted on.
        case stored(StoredNotification)
        /// Its `notificationUUID` is stored already (Apple's retry, or recovery of one that arrived).
        case duplicate(uuid: String)
        /// A verified `TEST` notification: logged, nothing stored.
        case test(uuid: String)
        /// Verified and for a configured app, but of a type this server does not act on: logged, not stored.
        case ignored(type: String)
        /// Refused; `reason` is a stable code (log lines, metrics), never payload content.
        case refused(reason: String, detail: String)
    }

    /// Reason codes besides `SignedPayloadError.Reason`: the checks after the signature (docs/apple-facts.md,
    /// "Verifying a signed notification", step 5).
    static let appReasons = [
        "unknown_app", "app_apple_id_mismatch", "missing_token", "malformed_body", "body_too_large",
    ]

    let verifier: SignedPayloadVerifier
    /// Configured apps: bundle ID → App Apple ID.
    let apps: [BundleID: Int64]
    let ledger: Ledger
    let metrics: Metrics
    let logger: Logger
    let clock: Clock

    /// Verifies, checks the app and stores; the caller acts on `.stored` (from storage, see
    /// `NotificationProcessor`).
    func receive(_ signedPayload: String, source: NotificationSource) throws(StorageError) -> Receipt {
        let receipt = try judgeAndStore(signedPayload, source: source)
        switch receipt {
        case .stored(let notification):
            count(notification.notificationType, notification.subtype, "stored")
            logger.info("notification stored", Self.metadata(notification))
        case .duplicate(let uuid):
            count(nil, nil, "duplicate")
            logger.info(
                "notification already stored",
                ["notification.uuid": uuid, "notification.source": source.rawValue]
            )
        case .test(let uuid):
            count("TEST", nil, "test")
            logger.info(
                "test notification received",
                ["notification.uuid": uuid, "notification.source": source.rawValue]
            )
        case .ignored(let type):
            count(type, nil, "ignored")
            logger.info("notification ignored", ["notification.type": type, "notification.source": source.rawValue])
        case .refused(let reason, let detail):
            refused(reason, detail, source: source)
        }
        return receipt
    }

    /// Counts and logs a refusal: the reason code and a detail that never repeats payload content.
    func refused(_ reason: String, _ detail: String, source: NotificationSource) {
        count(nil, nil, "refused")
        metrics.increment("linkout_notifications_refused_total", [("reason", reason)])
        logger.warning(
            "notification refused",
            ["reason": reason, "detail": detail, "notification.source": source.rawValue]
        )
    }

    private func judgeAndStore(_ signedPayload: String, source: NotificationSource) throws(StorageError) -> Receipt {
        let payload: NotificationPayload
        do {
            payload = try verifier.verify(signedPayload)
        } catch {
            return .refused(reason: error.code, detail: error.detail)
        }
        switch payload.notificationType {
        case .test:
            // Apple's test carries `data` with the app; one for another app is refused like any other.
            if let bundleId = payload.data?.bundleId, apps[bundleId] == nil {
                return .refused(reason: "unknown_app", detail: "bundleId is not a configured app")
            }
            return .test(uuid: payload.notificationUUID)
        case .externalPurchaseToken:
            break
        case .unknown(let type):
            guard let bundleId = payload.data?.bundleId, apps[bundleId] != nil else {
                return .refused(reason: "unknown_app", detail: "not a notification for a configured app")
            }
            return .ignored(type: Self.typeLabel(type))
        }
        guard let token = payload.externalPurchaseToken else {
            return .refused(reason: "missing_token", detail: "EXTERNAL_PURCHASE_TOKEN without externalPurchaseToken")
        }
        // The shape a landing's token is held to: a signed id of 20,000 characters, or with a line break and a
        // bidi override, was stored, reported and written to the log as it came.
        guard TokenDecoder.isExternalPurchaseId(token.externalPurchaseId.rawValue) else {
            return .refused(
                reason: "invalid_external_purchase_id",
                detail: "externalPurchaseId is not of the shape Apple issues (letters, digits, - and _, at most 128)"
            )
        }
        // As Apple's own verifier does it (App Store Server Library, `SignedDataVerifier`): the bundle ID always, the
        // App Apple ID in production (sandbox builds may carry none of their own); the environment from the `SANDBOX`
        // prefix.
        guard let appAppleId = apps[token.bundleId] else {
            return .refused(reason: "unknown_app", detail: "bundleId is not a configured app")
        }
        if token.environment == .production && token.appAppleId != appAppleId {
            return .refused(reason: "app_apple_id_mismatch", detail: "appAppleId does not match the configured app")
        }
        let notification = StoredNotification(
            notificationUUID: payload.notificationUUID,
            notificationType: payload.notificationType.rawValue,
            subtype: payload.subtype?.rawValue,
            externalPurchaseId: token.externalPurchaseId,
            environment: token.environment,
            signedDate: payload.signedDate,
            receivedAt: clock.nowMilliseconds(),
            source: source,
            signedPayload: signedPayload
        )
        return try ledger.notifications.storeNotification(notification)
            ? .stored(notification) : .duplicate(uuid: payload.notificationUUID)
    }

    /// `linkout_notifications_total{type,subtype,outcome}`, with label values from fixed sets.
    func count(_ type: String?, _ subtype: String?, _ outcome: String) {
        metrics.increment(
            "linkout_notifications_total",
            [("type", Self.typeLabel(type)), ("subtype", Self.subtypeLabel(subtype)), ("outcome", outcome)]
        )
    }

    static func typeLabel(_ type: String?) -> String {
        switch type {
        case nil: "none"
        case "EXTERNAL_PURCHASE_TOKEN", "TEST": type ?? "none"
        default: "other"
        }
    }

    static func subtypeLabel(_ subtype: String?) -> String {
        switch subtype {
        case nil: "none"
        case "UNREPORTED", "CREATED", "ACTIVE_TOKEN_REMINDER": subtype ?? "none"
        default: "other"
        }
    }

    static func metadata(_ notification: StoredNotification) -> [String: String] {
        var metadata = [
            "notification.uuid": notification.notificationUUID, "notification.type": notification.notificationType,
            "notification.source": notification.source.rawValue,
        ]
        if let subtype = notification.subtype { metadata["notification.subtype"] = subtype }
        if let id = notification.externalPurchaseId { metadata["external_purchase_id"] = id.rawValue }
        return metadata
    }
}
