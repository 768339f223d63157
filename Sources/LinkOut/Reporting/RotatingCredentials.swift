import Crypto
import ExternalPurchase
import Foundation
import Synchronization

/// The App Store Connect key, re-read when `apple.privateKeyFile` changes, so a rotated key (a new `.p8` written
/// over the old path, or a new file renamed onto it) is used without a restart. The file is looked at no more
/// often than `checkInterval`, never per request: one `stat` a minute costs nothing.
final class RotatingCredentials: Sendable {
    /// What identifies one version of the file: a replacement changes the inode (rename) or the modification
    /// time and usually the size (rewrite in place).
    private struct FileVersion: Equatable {
        var inode: UInt64
        var modified: Date
        var size: UInt64
    }

    private struct State {
        var loaded: Result<AppStoreJWT.Credentials, ConfigurationError>
        var version: FileVersion?
        /// The version of the file whose other key under the same key ID was not taken: looked at again once
        /// Apple refuses the key in use.
        var declined: FileVersion?
        var checkedAt: Int64
    }

    /// What a look at the file found.
    enum Change: Equatable {
        case none
        /// A new key was loaded from the file.
        case reloaded
        /// The file changed but holds no usable key (yet: it may be half written); the old key stays in use.
        case unusable(String)
        /// The file now holds another key than the one in use, under the same `apple.keyId`: every App Store
        /// Connect key has its own key ID, so Apple would refuse it; the key in use stays.
        case anotherKeyUnderTheSameID
    }

    static let checkInterval: Int64 = 60_000

    let apple: Configuration.Apple
    private let state: Mutex<State>

    init(apple: Configuration.Apple, now: Int64) {
        self.apple = apple
        state = Mutex(
            State(loaded: AppleCredentials.load(apple), version: Self.version(of: apple.privateKeyFile), checkedAt: now)
        )
    }

    /// The key in use, or why there is none.
    var current: Result<AppStoreJWT.Credentials, ConfigurationError> { state.withLock { $0.loaded } }

    /// Looks at the file if `checkInterval` has passed since the last look (or `force`), and loads it again
    /// when it changed. A key that loaded once is kept until a new one loads, and a different key is taken under
    /// the same key ID only when `replacingRefusedKey` (Apple refuses the JWTs of the key in use: the file held
    /// the wrong key of that ID).
    func refresh(now: Int64, force: Bool = false, replacingRefusedKey: Bool = false) -> Change {
        let path = apple.privateKeyFile
        let due = state.withLock { state -> (previous: FileVersion?, declined: FileVersion?)? in
            guard force || now - state.checkedAt >= Self.checkInterval else { return nil }
            state.checkedAt = now
            return (state.version, state.declined)
        }
        guard let due else { return .none }
        let version = Self.version(of: path)
        guard version != nil, version != due.previous || (replacingRefusedKey && version == due.declined) else {
            return .none
        }
        let loaded = AppleCredentials.load(apple)
        return state.withLock { state in
            state.version = version
            switch loaded {
            case .success(let new):
                if case .success(let inUse) = state.loaded, !replacingRefusedKey,
                    (try? inUse.key.publicKeyPEM()) != (try? new.key.publicKeyPEM())
                {
                    state.declined = version
                    return .anotherKeyUnderTheSameID
                }
                state.loaded = loaded
                state.declined = nil
                return .reloaded
            case .failure(let problem):
                if case .failure = state.loaded { state.loaded = loaded }
                return .unusable("\(problem.field) \(problem.problem)")
            }
        }
    }

    private static func version(of path: String) -> FileVersion? {
        guard !path.isEmpty, let attributes = try? FileManager.default.attributesOfItem(atPath: path) else {
            return nil
        }
        return FileVersion(
            inode: (attributes[.systemFileNumber] as? NSNumber)?.uint64Value ?? 0,
            modified: attributes[.modificationDate] as? Date ?? .distantPast,
            size: (attributes[.size] as? NSNumber)?.uint64Value ?? 0
        )
    }
}
