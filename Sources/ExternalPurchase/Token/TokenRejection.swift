/// Why a token was refused. `code` is a short, bounded label (metrics, JSON errors); `message` is plain words
/// for the person or developer reading it. Neither ever contains the token itself.
public struct TokenRejection: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: Sendable, Equatable {
        case empty
        case tooLong(limit: Int)
        case notBase64
        case notJSON
        case missingField(String)
        case invalidField(String)
        /// A top-level key appears more than once; the associated name is set only for the token's own fields, so
        /// a message never repeats arbitrary text from the request.
        case duplicateField(String?)
        /// `externalPurchaseId` is not of the shape Apple issues (letters, digits, `-` and `_`, at most 128).
        case invalidExternalPurchaseId
        case bundleIdMismatch
        case bundleIdNotConfigured
        case appAppleIdMismatch
        case creationDateInFuture
        /// `tokenType` is none of the values Apple issues (`TokenValidator.tokenTypes`).
        case unknownTokenType
        case expired
    }

    public var reason: Reason

    public init(_ reason: Reason) {
        self.reason = reason
    }

    /// Every code, for pre-registering metric series.
    public static let allCodes = [
        "empty", "too_long", "not_base64", "not_json", "missing_field", "invalid_field", "duplicate_field",
        "invalid_external_purchase_id", "bundle_id_mismatch",
        "bundle_id_not_configured", "app_apple_id_mismatch", "creation_date_in_future", "unknown_token_type",
        "expired",
    ]

    public var code: String {
        switch reason {
        case .empty: "empty"
        case .tooLong: "too_long"
        case .notBase64: "not_base64"
        case .notJSON: "not_json"
        case .missingField: "missing_field"
        case .invalidField: "invalid_field"
        case .duplicateField: "duplicate_field"
        case .invalidExternalPurchaseId: "invalid_external_purchase_id"
        case .bundleIdMismatch: "bundle_id_mismatch"
        case .bundleIdNotConfigured: "bundle_id_not_configured"
        case .appAppleIdMismatch: "app_apple_id_mismatch"
        case .creationDateInFuture: "creation_date_in_future"
        case .unknownTokenType: "unknown_token_type"
        case .expired: "expired"
        }
    }

    public var message: String {
        switch reason {
        case .empty: "The purchase token is empty."
        case .tooLong(let limit): "The purchase token is longer than \(limit) characters."
        case .notBase64: "The purchase token is not valid Base64URL text."
        case .notJSON: "The purchase token does not decode to a JSON object."
        case .missingField(let field): "The purchase token has no \(field) field."
        case .invalidField(let field): "The purchase token's \(field) field has the wrong type or value."
        case .duplicateField(let field?): "The purchase token has more than one \(field) field."
        case .duplicateField(nil): "The purchase token names a field more than once."
        case .invalidExternalPurchaseId:
            "The purchase token's externalPurchaseId is not an identifier Apple issues (letters, digits, - and _)."
        case .bundleIdMismatch: "The bundle ID in the link differs from the bundle ID in the purchase token."
        case .bundleIdNotConfigured: "The purchase token is for an app this server is not set up for."
        case .appAppleIdMismatch: "The purchase token's app ID does not match the app this server is set up for."
        case .creationDateInFuture: "The purchase token's creation date lies in the future."
        case .unknownTokenType:
            "The purchase token's tokenType is not one Apple issues (ACQUISITION, SERVICES, IN_APP, LINK_OUT, "
                + "WITHIN_APP, OUT_OF_APP)."
        case .expired: "The purchase token has expired and can no longer be used for new purchases."
        }
    }

    public var description: String { "TokenRejection(\(code)): \(message)" }
}
