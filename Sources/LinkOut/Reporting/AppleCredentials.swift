import Crypto
import ExternalPurchase
import Foundation

/// The App Store Connect key reporting signs with, read once at start-up.
enum AppleCredentials {
    /// Reads the `.p8` key; a missing or unreadable key names the field to fix.
    static func load(_ apple: Configuration.Apple) -> Result<AppStoreJWT.Credentials, ConfigurationError> {
        guard !apple.issuerId.isEmpty else {
            return .failure(ConfigurationError(field: "apple.issuerId", problem: "is empty"))
        }
        guard !apple.keyId.isEmpty else {
            return .failure(ConfigurationError(field: "apple.keyId", problem: "is empty"))
        }
        guard !apple.privateKeyFile.isEmpty else {
            return .failure(ConfigurationError(field: "apple.privateKeyFile", problem: "is empty"))
        }
        let data: Data
        do {
            // Named as every file the configuration names (no such file, not readable, a folder), not in
            // Foundation's words ("NSCocoaErrorDomain error 256").
            data = try ConfigurationFile.read(
                apple.privateKeyFile,
                limit: ConfigurationFile.secretLimit,
                field: "apple.privateKeyFile"
            )
        } catch {
            return .failure(error)
        }
        do {
            let key = try ES256Key(pem: String(decoding: data, as: UTF8.self))
            return .success(AppStoreJWT.Credentials(issuerId: apple.issuerId, keyId: apple.keyId, key: key))
        } catch {
            return .failure(
                ConfigurationError(field: "apple.privateKeyFile", problem: "is not a P-256 PKCS#8 key (.p8)")
            )
        }
    }
}
