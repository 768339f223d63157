import Crypto
import Foundation
import Lifecycle
import Storage
import Synchronization

/// linkout's entitlement keys: which one signs now, and which are published. Generated keys live in the ledger,
/// so every instance on one ledger signs with the same key and publishes the same set; a key file named in the
/// configuration signs instead, its public half recorded so it stays published after the file is replaced.
/// A rotated-out key stays published until it is retired, which is refused while entitlements it signed may
/// still be valid: an entitlement signed before a rotation verifies until it expires.
final class EntitlementKeyring: Sendable {
    private struct Loaded {
        var records: [SigningKeyRecord]
        var signers: [String: ES256Key]
        var at: Int64
    }

    /// Another instance's rotation reaches this one's signing within this time (the JWKS is read from the ledger
    /// on every request, so the new key is published everywhere at once).
    static let refreshMilliseconds: Int64 = 60_000

    private let ledger: Ledger
    private let clock: Clock
    private let fileKey: EntitlementKey?
    private let lifetimeMilliseconds: Int64
    private let loaded: Mutex<Loaded>

    /// Reads the key file, or generates the first key into the ledger when none is there.
    init(ledger: Ledger, configuration: Configuration.AppEntitlements, clock: Clock) throws {
        self.ledger = ledger
        self.clock = clock
        lifetimeMilliseconds = configuration.lifetimeSeconds * 1000
        let now = clock.nowMilliseconds()
        if configuration.signingKeyFile.isEmpty {
            fileKey = nil
            if try !ledger.signingKeys.keys().contains(where: { $0.privateKeyPEM != nil }) {
                try ledger.signingKeys.insert(try Self.generate(at: now, signsFrom: now))
            }
        } else {
            let key = try Self.readKeyFile(configuration.signingKeyFile)
            let jwk = try EntitlementKey.publicJWK(of: key)
            fileKey = EntitlementKey(jwk: jwk, signer: key)
            try ledger.signingKeys.insert(
                SigningKeyRecord(
                    kid: jwk.kid,
                    publicJWK: try EntitlementKey.jsonText(jwk),
                    privateKeyPEM: nil,
                    createdAt: now,
                    signsFrom: now
                )
            )
        }
        loaded = Mutex(try Self.load(ledger, at: now))
    }

    private static func readKeyFile(_ path: String) throws -> ES256Key {
        let pem: String
        do {
            pem = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigurationError(field: "appEntitlements.signingKeyFile", problem: "cannot be read (\(path))")
        }
        do {
            return try ES256Key(pem: pem)
        } catch {
            throw ConfigurationError(
                field: "appEntitlements.signingKeyFile",
                problem: "must hold a PKCS#8 PEM P-256 private key (\(error.description))"
            )
        }
    }

    private static func generate(at now: Int64, signsFrom: Int64) throws -> SigningKeyRecord {
        let key = try ES256Key.generate()
        let jwk = try EntitlementKey.publicJWK(of: key)
        return SigningKeyRecord(
            kid: jwk.kid,
            publicJWK: try EntitlementKey.jsonText(jwk),
            privateKeyPEM: try key.privateKeyPEM(),
            createdAt: now,
            signsFrom: signsFrom
        )
    }

    private static func load(_ ledger: Ledger, at now: Int64) throws -> Loaded {
        let records = try ledger.signingKeys.keys()
        var signers: [String: ES256Key] = [:]
        for record in records {
            guard let pem = record.privateKeyPEM else { continue }
            signers[record.kid] = try ES256Key(pem: pem)
        }
        return Loaded(records: records, signers: signers, at: now)
    }

    /// The key that signs now: the key file's, else the generated key that began signing last.
    func signingKey() throws -> EntitlementKey {
        if let fileKey { return fileKey }
        let now = clock.nowMilliseconds()
        let current = try loaded.withLock { loaded throws -> Loaded in
            if now - loaded.at >= Self.refreshMilliseconds || now < loaded.at {
                loaded = try Self.load(ledger, at: now)
            }
            return loaded
        }
        guard
            let record = current.records.last(where: { $0.signsFrom <= now && current.signers[$0.kid] != nil }),
            let signer = current.signers[record.kid]
        else { throw KeyringError("no entitlement signing key is in force; run 'linkout keys rotate'") }
        return EntitlementKey(jwk: try Self.jwk(record), signer: signer)
    }

    private static func jwk(_ record: SigningKeyRecord) throws -> PublicJWK {
        try JSONDecoder().decode(PublicJWK.self, from: Data(record.publicJWK.utf8))
    }

    /// `/.well-known/jwks.json`: every key not retired, read from the ledger (a key another instance rotated in
    /// is published at once).
    func publishedKeys() throws -> [PublicJWK] {
        try ledger.signingKeys.keys().map(Self.jwk)
    }

    /// A new generated key, published now and signing from `publishAhead` seconds on (so clients that cache
    /// the JWKS can fetch it before they meet it). The key it replaces stays published until retired.
    func rotate(publishAheadSeconds: Int64 = 0) throws -> SigningKeyRecord {
        guard fileKey == nil else {
            throw KeyringError(
                "the signing key comes from appEntitlements.signingKeyFile: point it at a new key file and restart"
            )
        }
        let now = clock.nowMilliseconds()
        // Strictly after every key before it, so "the key that began signing last" is never a tie.
        let latest = try ledger.signingKeys.keys(includingRetired: true).map(\.signsFrom).max() ?? now
        let signsFrom = max(now + max(0, publishAheadSeconds) * 1000, latest + 1)
        let record = try Self.generate(at: now, signsFrom: signsFrom)
        try ledger.signingKeys.insert(record)
        try loaded.withLock { loaded throws in loaded = try Self.load(ledger, at: now) }
        return record
    }

    /// Takes a key out of the JWKS. Refused for the key that signs now, and while entitlements it signed may
    /// still be valid (until `lifetimeSeconds` after the next key began signing) unless `force`d: a key that
    /// leaked must stop verifying at once, whatever it signed.
    func retire(kid: String, force: Bool = false) throws {
        let now = clock.nowMilliseconds()
        let records = try ledger.signingKeys.keys()
        guard let record = records.first(where: { $0.kid == kid }) else {
            throw KeyringError("no published key has the id \(kid)")
        }
        guard try kid != signingKey().kid else { throw KeyringError("\(kid) is the key that signs now") }
        let successorStart = records.filter { $0.signsFrom > record.signsFrom && $0.signsFrom <= now }
            .map(\.signsFrom).min()
        if !force, let successorStart, successorStart + lifetimeMilliseconds > now {
            let date = Date(timeIntervalSince1970: Double(successorStart + lifetimeMilliseconds) / 1000)
            throw KeyringError(
                "entitlements \(kid) signed may be valid until \(date.formatted(.iso8601)); retire it after that "
                    + "(or force it, if the key leaked)"
            )
        }
        guard try ledger.signingKeys.retire(kid: kid, at: now) else {
            throw KeyringError("no published key has the id \(kid)")
        }
        try loaded.withLock { loaded throws in loaded = try Self.load(ledger, at: now) }
    }
}

/// Why a key operation was refused, in words for the operator.
struct KeyringError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
