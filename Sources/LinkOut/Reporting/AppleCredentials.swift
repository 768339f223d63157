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
        guard let data = FileManager.default.contents(atPath: apple.privateKeyFile) else {
            return .failure(
                ConfigurationError(
                    field: "apple.privateKeyFile",
                    problem: "cannot be read (\(apple.privateKeyFile): \(unreadable(apple.privateKeyFile)))"
                )
            )
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

    /// Why the file at `path` cannot be read, in the system's words ("No such file or directory", "Permission
    /// denied", "Is a directory").
    static func unreadable(_ path: String) -> String {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            return String(cString: strerror(EISDIR))
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd < 0 else {
            close(fd)
            return "unreadable"
        }
        return String(cString: strerror(errno))
    }
}
