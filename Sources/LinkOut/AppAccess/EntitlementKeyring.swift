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
    /// Who holds the keyring: the server may add keys (the first generated one, its key file's public half);
    /// the operator's tools only read, rotate and retire.
    enum Role {
        case server
        case administration
    }

    private struct Loaded {
        /// The published keys, in the order they began signing.
        var records: [SigningKeyRecord]
        var retired: Set<String>
        var signers: [String: ES256Key]
        var at: Int64
    }

    /// Another instance's rotation reaches this one's signing within this time (the JWKS is read from the ledger
    /// on every request, so the new key is published everywhere at once).
    static let refreshMilliseconds: Int64 = 60_000
    /// How long `/.well-known/jwks.json` may be cached (its `Cache-Control`).
    static let keySetMaxAgeSeconds: Int64 = 300
    /// A rotated-in key is published this long before it signs by default: longer than a client may cache the
    /// JWKS and than an instance takes to see the rotation, so no client meets a key it cannot have fetched.
    static let defaultPublishAheadSeconds = keySetMaxAgeSeconds + refreshMilliseconds / 1000

    private let ledger: Ledger
    private let clock: Clock
    private let fileKey: EntitlementKey?
    private let lifetimeMilliseconds: Int64
    private let loaded: Mutex<Loaded>
    /// When this process last noted its signing with each key (`SigningKeyStore.recordSigning`).
    private let signingNoted = Mutex<[String: Int64]>([:])
    /// A server notes its signing with a key at most this often; a retirement allows for it.
    static let signingNoteMilliseconds: Int64 = 60_000

    /// As the server: reads the key file (refused when that key was retired), or generates the first key into
    /// the ledger when none is there. As the operator's tools: reads the key file named in the configuration,
    /// and adds nothing.
    init(ledger: Ledger, configuration: Configuration.AppEntitlements, clock: Clock, role: Role = .server) throws {
        self.ledger = ledger
        self.clock = clock
        lifetimeMilliseconds = configuration.lifetimeSeconds * 1000
        let now = clock.nowMilliseconds()
        let known = try ledger.signingKeys.keys(includingRetired: true)
        if configuration.signingKeyFile.isEmpty {
            fileKey = nil
            if role == .server, !known.contains(where: { $0.privateKeyPEM != nil && $0.retiredAt == nil }) {
                try ledger.signingKeys.insert(try Self.generate(at: now, signsFrom: now))
            }
        } else {
            let key = try Self.readKeyFile(configuration.signingKeyFile)
            let jwk = try EntitlementKey.publicJWK(of: key)
            // A retired key no longer verifies anywhere: what it signed now would fail every app's check.
            if known.contains(where: { $0.kid == jwk.kid && $0.retiredAt != nil }) {
                throw ConfigurationError(
                    field: "appEntitlements.signingKeyFile",
                    problem: "holds the key \(jwk.kid), which was retired; name a new key file"
                )
            }
            fileKey = EntitlementKey(jwk: jwk, signer: key)
            if role == .server {
                let inserted = try ledger.signingKeys.insert(
                    SigningKeyRecord(
                        kid: jwk.kid,
                        publicJWK: try EntitlementKey.jsonText(jwk),
                        privateKeyPEM: nil,
                        createdAt: now,
                        signsFrom: now
                    )
                )
                if !inserted { try ledger.signingKeys.resumeSigning(kid: jwk.kid, at: now) }
            }
        }
        loaded = Mutex(try Self.load(ledger, at: now))
    }

    static func readKeyFile(_ path: String) throws -> ES256Key {
        let pem = String(
            decoding: try ConfigurationFile.read(
                path,
                limit: ConfigurationFile.secretLimit,
                field: "appEntitlements.signingKeyFile"
            ),
            as: UTF8.self
        )
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
        let all = try ledger.signingKeys.keys(includingRetired: true)
        let records = all.filter { $0.retiredAt == nil }
        var signers: [String: ES256Key] = [:]
        for record in records {
            guard let pem = record.privateKeyPEM else { continue }
            signers[record.kid] = try ES256Key(pem: pem)
        }
        return Loaded(
            records: records,
            retired: Set(all.filter { $0.retiredAt != nil }.map(\.kid)),
            signers: signers,
            at: now
        )
    }

    /// The published keys as last read, re-read once `refreshMilliseconds` old, and whenever a key read as
    /// signing later has begun to since: it may have been retired meanwhile (by the operator's tools, or another
    /// instance), and a retired key never signs.
    private func current(at now: Int64) throws -> Loaded {
        try loaded.withLock { loaded throws -> Loaded in
            let keyBegan = loaded.records.contains { $0.signsFrom > loaded.at && $0.signsFrom <= now }
            if now - loaded.at >= Self.refreshMilliseconds || now < loaded.at || keyBegan {
                loaded = try Self.load(ledger, at: now)
            }
            return loaded
        }
    }

    /// The id of the key that signs now: the key file's, else the published key that began signing last (a key
    /// file's too, when another configuration's server put it there).
    private func signingKid(_ current: Loaded, at now: Int64) throws -> String {
        if let fileKey { return fileKey.kid }
        guard let record = current.records.last(where: { $0.signsFrom <= now }) else {
            throw AppAccessRefusal("no entitlement signing key is in force; run 'linkout keys rotate'")
        }
        return record.kid
    }

    /// The key that signs now, with its private half. Refused when that key has been retired (by another
    /// instance or the operator's tools), or is a key file's this process does not hold while it holds no other
    /// key that began signing: nothing is signed that the JWKS would not verify.
    func signingKey() throws -> EntitlementKey {
        let now = clock.nowMilliseconds()
        let current = try current(at: now)
        let kid = try signingKid(current, at: now)
        guard !current.retired.contains(kid) else {
            throw AppAccessRefusal("the signing key \(kid) was retired; name a new appEntitlements.signingKeyFile")
        }
        if let fileKey {
            try noteSigning(with: kid, at: now)
            return fileKey
        }
        guard let held = Self.heldSigningKid(current, signing: kid, at: now),
            let record = current.records.first(where: { $0.kid == held }), let signer = current.signers[held]
        else {
            throw AppAccessRefusal(
                "the key that signs now (\(kid)) comes from a key file this configuration does not name"
            )
        }
        try noteSigning(with: held, at: now)
        return EntitlementKey(jwk: try Self.jwk(record), signer: signer)
    }

    /// The key this process signs with on generated keys: `signing` (the key that began signing last) when it holds
    /// its private half; else, when that key is another configuration's key file (a rolling change to a key file,
    /// or a key file left behind), the newest generated key it holds that has begun signing, which stays published
    /// (its retirement waits for this instance's notes). Nil when it holds none.
    private static func heldSigningKid(_ current: Loaded, signing: String, at now: Int64) -> String? {
        current.signers[signing] != nil
            ? signing : current.records.last { $0.signsFrom <= now && current.signers[$0.kid] != nil }?.kid
    }

    /// Before an entitlement is signed with `kid`: that this server signs with it now, and how long what it signs
    /// lives (at most once a minute), so the key's retirement waits for the last of it, whatever instance or
    /// configuration signed it.
    private func noteSigning(with kid: String, at now: Int64) throws {
        if let noted = signingNoted.withLock({ $0[kid] }), now - noted < Self.signingNoteMilliseconds, now >= noted {
            return
        }
        try ledger.signingKeys.recordSigning(kid: kid, lifetimeSeconds: lifetimeMilliseconds / 1000, at: now)
        signingNoted.withLock { $0[kid] = now }
    }

    private static func jwk(_ record: SigningKeyRecord) throws -> PublicJWK {
        try JSONDecoder().decode(PublicJWK.self, from: Data(record.publicJWK.utf8))
    }

    /// `/.well-known/jwks.json`: every key not retired, read from the ledger (a key another instance rotated in
    /// is published at once). While PostgreSQL cannot be reached, the set last read: apps verify entitlements
    /// they already hold with it, and a key published or retired meanwhile shows once the database is back (a
    /// 503 would fail every app that fetches the set then).
    func publishedKeys() throws -> [PublicJWK] {
        do {
            return try ledger.signingKeys.keys().map(Self.jwk)
        } catch let error as StorageError where error.code == .unavailable {
            // The keys this instance signs with, read at its start and every minute since.
            let loaded = loaded.withLock { $0 }
            return try loaded.records.filter { !loaded.retired.contains($0.kid) }.map(Self.jwk)
        }
    }

    /// A new generated key, published now and signing from `publishAheadSeconds` on. The key it replaces stays
    /// published until retired. Refused while this configuration names a key file: that key is rotated by replacing
    /// the file. A key file another configuration left signing (one named once, then no longer) is replaced like
    /// any key: it began signing last, and the new key begins after it.
    func rotate(publishAheadSeconds: Int64 = defaultPublishAheadSeconds) throws -> SigningKeyRecord {
        let now = clock.nowMilliseconds()
        if let fileKey {
            throw AppAccessRefusal(
                "a key file signs (\(fileKey.kid)): point appEntitlements.signingKeyFile at a new key and restart"
            )
        }
        // Strictly after every key that signs by then, so "the key that began signing last" is never a tie. A key
        // published ahead to sign later does not hold this one back: a leaked key is replaced at once (`0`), and
        // the planned successor still takes over at its time.
        let wanted = now + max(0, publishAheadSeconds) * 1000
        // Another rotation at the same moment may take the start picked here first: then pick again.
        for _ in 0..<5 {
            let starts = Set(try ledger.signingKeys.keys(includingRetired: true).map(\.signsFrom))
            var signsFrom = max(wanted, (starts.filter { $0 <= wanted }.max() ?? wanted - 1) + 1)
            while starts.contains(signsFrom) { signsFrom += 1 }
            let record = try Self.generate(at: now, signsFrom: signsFrom)
            guard try ledger.signingKeys.insertStartingAlone(record) else { continue }
            try loaded.withLock { loaded throws in loaded = try Self.load(ledger, at: now) }
            return record
        }
        throw AppAccessRefusal("other rotations took every moment picked for this one; rotate again")
    }

    /// Takes a key out of the JWKS. Refused for the key that signs now, and while entitlements it signed may
    /// still be valid unless `force`d (a key that leaked must stop verifying at once, whatever it signed): until
    /// the longest lifetime it signed with after it last signed anywhere, as its successor's start and the
    /// instances' notes tell; a key that began signing with neither waits for a key to take over.
    func retire(kid: String, force: Bool = false) throws {
        let now = clock.nowMilliseconds()
        let records = try ledger.signingKeys.keys()
        guard let record = records.first(where: { $0.kid == kid }) else {
            throw AppAccessRefusal("no published key has the id \(kid)")
        }
        // Never the key this process signs with. The key that began signing last is refused too, unless forced:
        // when it is a key file's another configuration names, a server there signs with it whatever this one
        // knows of its notes; forced, a leaked key file's key left behind can go.
        let current = try current(at: now)
        let signingNow = try signingKid(current, at: now)
        let signsHere = fileKey?.kid ?? Self.heldSigningKid(current, signing: signingNow, at: now)
        guard kid != signsHere, kid != signingNow || force else {
            throw AppAccessRefusal(
                "\(kid) is the key that signs now" + (kid == signsHere ? "" : " where its file is named")
            )
        }
        let successorStart = records.filter { $0.signsFrom > record.signsFrom && $0.signsFrom <= now }
            .map(\.signsFrom).min()
        // The last moment it may have signed: its successor's start (plus the minute another instance takes to
        // see it), or the last signature an instance noted (plus the minute between notes), whichever is later;
        // then the longest lifetime it signed with, not this configuration's, which may have been shortened.
        let signing = try ledger.signingKeys.signing(kid: kid)
        let stoppedSigning = [
            successorStart.map { $0 + Self.refreshMilliseconds },
            signing.lastSignedAt.map { $0 + Self.signingNoteMilliseconds },
        ].compactMap { $0 }.max()
        let lifetime = max(lifetimeMilliseconds, (signing.longestLifetimeSeconds ?? 0) * 1000)
        if !force {
            // Began signing, no key took over, and no note of its signing: an instance or a configuration this one
            // does not see (another key file) may sign with it still.
            guard let stoppedSigning else {
                if record.signsFrom <= now {
                    throw AppAccessRefusal(
                        "\(kid) may still sign on an instance or configuration this one does not see; retire it once "
                            + "another key signs everywhere (or force it, if the key leaked)"
                    )
                }
                return try retireNow(kid, at: now)
            }
            if stoppedSigning + lifetime > now {
                let date = Date(timeIntervalSince1970: Double(stoppedSigning + lifetime) / 1000)
                throw AppAccessRefusal(
                    "entitlements \(kid) signed may be valid until \(date.formatted(.iso8601)); retire it after that "
                        + "(or force it, if the key leaked)"
                )
            }
        }
        try retireNow(kid, at: now)
    }

    private func retireNow(_ kid: String, at now: Int64) throws {
        guard try ledger.signingKeys.retire(kid: kid, at: now) else {
            throw AppAccessRefusal("no published key has the id \(kid)")
        }
        try loaded.withLock { loaded throws in loaded = try Self.load(ledger, at: now) }
    }
}
