/// The decoded JSON of an external purchase token (Apple: "Receiving and decoding external purchase tokens").
///
/// The token is not signed, so nothing here proves it came from Apple; `TokenValidator` checks it for shape and
/// consistency, and Apple's report API and notifications are the only authority.
public struct ExternalPurchaseToken: Sendable, Equatable, Codable {
    /// "Uniquely identifies the app to which the token applies."
    public var appAppleId: Int64
    /// "The bundle ID of the app."
    public var bundleId: BundleID
    /// "UNIX time, in milliseconds, when the system created the token."
    public var tokenCreationDate: Int64
    /// "A unique value the system creates to identify the token." Everything is keyed on it.
    public var externalPurchaseId: ExternalPurchaseID
    /// Custom-link tokens only: `ACQUISITION`, `SERVICES`, or values Apple adds later (kept as sent).
    public var tokenType: String?
    /// Custom-link tokens only: UNIX ms after which the token takes no new transactions.
    public var tokenExpirationDate: Int64?

    public init(
        appAppleId: Int64,
        bundleId: BundleID,
        tokenCreationDate: Int64,
        externalPurchaseId: ExternalPurchaseID,
        tokenType: String? = nil,
        tokenExpirationDate: Int64? = nil
    ) {
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.tokenCreationDate = tokenCreationDate
        self.externalPurchaseId = externalPurchaseId
        self.tokenType = tokenType
        self.tokenExpirationDate = tokenExpirationDate
    }

    private enum CodingKeys: String, CodingKey {
        case appAppleId, bundleId, tokenCreationDate, externalPurchaseId, tokenType, tokenExpirationDate
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        appAppleId = try Self.integer(container, .appAppleId)
        bundleId = try container.decode(BundleID.self, forKey: .bundleId)
        tokenCreationDate = try Self.integer(container, .tokenCreationDate)
        externalPurchaseId = try container.decode(ExternalPurchaseID.self, forKey: .externalPurchaseId)
        tokenType = try container.decodeIfPresent(String.self, forKey: .tokenType)
        tokenExpirationDate =
            container.contains(.tokenExpirationDate) ? try Self.integer(container, .tokenExpirationDate) : nil
    }

    /// Foundation reports a fraction or an out-of-range number for an Int64 as corrupt data without saying where;
    /// this names the field.
    private static func integer(_ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> Int64 {
        guard container.contains(key) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: [key], debugDescription: "missing"))
        }
        do {
            return try container.decode(Int64.self, forKey: key)
        } catch {
            throw DecodingError.typeMismatch(Int64.self, .init(codingPath: [key], debugDescription: "not an integer"))
        }
    }

    /// Where reports for this token go (`ExternalPurchaseID.environment`).
    public var environment: Environment { externalPurchaseId.environment }

    /// Whether the token may still take new purchases at `milliseconds` (custom-link tokens expire; link-out
    /// tokens from `ExternalPurchaseLink.open` carry no expiry): `ReportingPolicy.hasExpired`.
    public func acceptsPurchases(atMilliseconds milliseconds: Int64) -> Bool {
        !ReportingPolicy.hasExpired(self, at: milliseconds)
    }
}
