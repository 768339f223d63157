public import Domain

/// The decoded payload of an App Store Server Notification V2 (Apple: "responseBodyV2DecodedPayload"), as far as
/// external purchase tokens and `TEST` notifications need it. Unknown keys are ignored and unknown types are kept as
/// sent, so a notification Apple adds later still decodes and can be stored.
public struct NotificationPayload: Sendable, Equatable, Codable {
    public var notificationType: NotificationType
    /// Absent for types without subtypes (`TEST`).
    public var subtype: NotificationSubtype?
    /// Apple: "Use this value to identify a duplicate notification." Receivers deduplicate on it.
    public var notificationUUID: String
    /// `"2.0"`.
    public var version: String?
    /// UNIX ms when Apple signed the notification; the certificate chain is judged at this moment.
    public var signedDate: Int64
    /// App metadata; present on `TEST` and on App Store transaction notifications.
    public var data: NotificationData?
    /// Present on `EXTERNAL_PURCHASE_TOKEN` notifications: a sibling of `data`, not inside it (Apple:
    /// "responseBodyV2DecodedPayload", "externalPurchaseToken"). Apple: "the Base64URL-decoded JSON of the external
    /// purchase token your app or website receives".
    public var externalPurchaseToken: ExternalPurchaseToken?

    public init(
        notificationType: NotificationType,
        subtype: NotificationSubtype? = nil,
        notificationUUID: String,
        version: String? = "2.0",
        signedDate: Int64,
        data: NotificationData? = nil,
        externalPurchaseToken: ExternalPurchaseToken? = nil
    ) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.notificationUUID = notificationUUID
        self.version = version
        self.signedDate = signedDate
        self.data = data
        self.externalPurchaseToken = externalPurchaseToken
    }

    /// Where the notification comes from. For external purchase tokens Apple's own verifier goes by the `SANDBOX`
    /// prefix of `externalPurchaseId` (`SignedDataVerifier` in Apple's App Store Server Library for Swift), because
    /// such payloads carry no `data`; otherwise `data.environment` says it. Nil when neither is present or the name is
    /// unknown.
    public var environment: Environment? {
        if let token = externalPurchaseToken { return token.environment }
        return data?.environment
    }
}

/// `data` of a notification: which app and environment it concerns.
public struct NotificationData: Sendable, Equatable, Codable {
    /// `Sandbox` or `Production` as Apple writes it (other values, such as Xcode's, are kept as sent).
    public var environmentName: String?
    public var bundleId: BundleID?
    public var appAppleId: Int64?
    public var bundleVersion: String?

    public init(
        environmentName: String? = nil,
        bundleId: BundleID? = nil,
        appAppleId: Int64? = nil,
        bundleVersion: String? = nil
    ) {
        self.environmentName = environmentName
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.bundleVersion = bundleVersion
    }

    private enum CodingKeys: String, CodingKey {
        case environmentName = "environment"
        case bundleId, appAppleId, bundleVersion
    }

    public var environment: Environment? {
        switch environmentName {
        case "Sandbox": .sandbox
        case "Production": .production
        default: nil
        }
    }
}

/// `notificationType`. Only the types this server acts on are named; the rest keep their text. Values compare by
/// their text, so `.unknown("TEST")` equals `.test`.
public enum NotificationType: Sendable, Equatable, Hashable, TextCoded {
    /// A token Apple created or wants reported (Apple: "notificationType", "subtype").
    case externalPurchaseToken
    /// Sent on request from App Store Connect or the App Store Server API to test the endpoint.
    case test
    case unknown(String)

    public init(rawValue: String) {
        switch rawValue {
        case "EXTERNAL_PURCHASE_TOKEN": self = .externalPurchaseToken
        case "TEST": self = .test
        default: self = .unknown(rawValue)
        }
    }

    public var rawValue: String {
        switch self {
        case .externalPurchaseToken: "EXTERNAL_PURCHASE_TOKEN"
        case .test: "TEST"
        case .unknown(let value): value
        }
    }

}

/// `subtype` of an `EXTERNAL_PURCHASE_TOKEN` notification (Apple: "subtype"); other subtypes keep their text. Values
/// compare by their text.
public enum NotificationSubtype: Sendable, Equatable, Hashable, TextCoded {
    /// "Apple created a token for your app but didn't receive a report": report it, as `UNRECOGNIZED_TOKEN` when
    /// it is unknown here.
    case unreported
    /// "Apple created a custom link token for your app."
    case created
    /// Monthly while a custom link token is active, unless it was reported as a duplicate.
    case activeTokenReminder
    case unknown(String)

    public init(rawValue: String) {
        switch rawValue {
        case "UNREPORTED": self = .unreported
        case "CREATED": self = .created
        case "ACTIVE_TOKEN_REMINDER": self = .activeTokenReminder
        default: self = .unknown(rawValue)
        }
    }

    public var rawValue: String {
        switch self {
        case .unreported: "UNREPORTED"
        case .created: "CREATED"
        case .activeTokenReminder: "ACTIVE_TOKEN_REMINDER"
        case .unknown(let value): value
        }
    }

}

/// A value Apple sends as a string, known or not: it decodes from and encodes to its text, so an unknown one
/// round-trips unchanged.
public protocol TextCoded: Codable, RawRepresentable where RawValue == String {
    init(rawValue: String)
}

extension TextCoded {
    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
