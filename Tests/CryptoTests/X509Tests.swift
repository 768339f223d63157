import Crypto
import TestSupport
import Testing

@Suite("X.509 certificates and chains")
struct X509Tests {
    static let appleIntermediateOID = "1.2.840.113635.100.6.2.1"
    static let appleLeafOID = "1.2.840.113635.100.6.11.1"

    /// 2020-01-01, 2025-01-01, 2040-01-01 (UNIX seconds).
    static let start: Int64 = 1_577_836_800
    static let middle: Int64 = 1_735_689_600
    static let end: Int64 = 2_208_988_800

    /// A root, an intermediate and a leaf shaped like Apple's notification chain.
    /// The shared test chain, with these tests' markers by default.
    typealias Chain = TestCertificateChain

    @Test func mintedCertificatesReadBack() throws {
        let chain = try Chain()
        #expect(chain.root.subject == "CN=Test Root CA,O=Test PKI")
        #expect(chain.root.issuer == chain.root.subject)
        #expect(chain.leaf.subject == "CN=Test Leaf")
        #expect(chain.leaf.issuer == "CN=Test Intermediate CA")
        #expect(chain.root.notBefore == Self.start)
        #expect(chain.root.notAfter == Self.end)
        #expect(chain.intermediate.hasExtension(oid: Self.appleIntermediateOID))
        #expect(!chain.intermediate.hasExtension(oid: Self.appleLeafOID))
        #expect(chain.leaf.hasExtension(oid: Self.appleLeafOID))
        #expect(chain.leaf.hasExtension(oid: "2.5.29.19"))  // basicConstraints
        #expect(chain.leaf.isValid(atSeconds: Self.middle))
        #expect(!chain.leaf.isValid(atSeconds: Self.start - 1))
    }

    @Test func pemRoundTripsAndBundlesParseInOrder() throws {
        let chain = try Chain()
        #expect(try X509Certificate(pem: chain.leaf.pem) == chain.leaf)
        let bundle = chain.root.pem + "\n" + chain.intermediate.pem
        #expect(try X509Certificate.all(pem: bundle) == [chain.root, chain.intermediate])
    }

    @Test(arguments: [
        "", "not a certificate",
        "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
    ])
    func refusesTextWithoutACertificate(text: String) {
        #expect(throws: CryptoError.self) { try X509Certificate(pem: text) }
    }

    @Test func refusesBrokenDER() throws {
        let chain = try Chain()
        #expect(throws: CryptoError.self) { try X509Certificate(der: []) }
        #expect(throws: CryptoError.self) { try X509Certificate(der: Array(chain.leaf.der.dropLast())) }
        #expect(throws: CryptoError.self) { try X509Certificate(der: chain.leaf.der + [0]) }
    }

    @Test func theLeafKeyVerifiesWhatTheLeafSigned() throws {
        let chain = try Chain()
        let message = Array("header.payload".utf8)
        let signature = try chain.leafKey.sign(message)
        #expect(try chain.leaf.publicKey().verify(signature, message: message))
        #expect(try !chain.intermediate.publicKey().verify(signature, message: message))
    }

    @Test func fingerprintIsTheSHA256OfTheDER() throws {
        let chain = try Chain()
        #expect(chain.root.sha256Fingerprint.count == 32)
        #expect(chain.root.sha256FingerprintText.split(separator: ":").count == 32)
        #expect(chain.root.sha256Fingerprint != chain.leaf.sha256Fingerprint)
    }

    @Test func aChainToATrustedRootVerifies() throws {
        let chain = try Chain()
        let verifier = X509ChainVerifier(trustedRoots: [chain.root])
        try verifier.verify(leaf: chain.leaf, intermediates: [chain.intermediate], atSeconds: Self.middle)
    }

    @Test func validityIsJudgedAtTheGivenMomentNotNow() throws {
        // The leaf lived in 2020 only; verifying at a 2020 moment succeeds although "now" is long after.
        let chain = try Chain(leafValidity: Self.start...(Self.start + 366 * 86_400))
        let verifier = X509ChainVerifier(trustedRoots: [chain.root])
        try verifier.verify(leaf: chain.leaf, intermediates: [chain.intermediate], atSeconds: Self.start + 86_400)
        let failure = try #require(throws: X509ChainVerifier.Failure.self) {
            try verifier.verify(leaf: chain.leaf, intermediates: [chain.intermediate], atSeconds: Self.middle)
        }
        #expect(failure.reason == .outsideValidity)
        #expect(failure.depth == 0)
        let early = try #require(throws: X509ChainVerifier.Failure.self) {
            try verifier.verify(leaf: chain.leaf, intermediates: [chain.intermediate], atSeconds: Self.start - 10)
        }
        #expect(early.reason == .outsideValidity)
    }

    @Test func aRootThatArrivesWithTheChainIsNotTrusted() throws {
        let trusted = try Chain()
        let rogue = try Chain()
        let verifier = X509ChainVerifier(trustedRoots: [trusted.root])
        let failure = try #require(throws: X509ChainVerifier.Failure.self) {
            try verifier.verify(
                leaf: rogue.leaf,
                intermediates: [rogue.intermediate, rogue.root],
                atSeconds: Self.middle
            )
        }
        #expect(failure.reason == .untrusted)
    }

    @Test func aRogueRootWithTheTrustedRootsNameIsNotTrusted() throws {
        let trusted = try Chain(rootName: "Same Name Root")
        let rogue = try Chain(rootName: "Same Name Root")
        let verifier = X509ChainVerifier(trustedRoots: [trusted.root])
        let failure = try #require(throws: X509ChainVerifier.Failure.self) {
            try verifier.verify(
                leaf: rogue.leaf,
                intermediates: [rogue.intermediate, rogue.root],
                atSeconds: Self.middle
            )
        }
        #expect(failure.reason == .untrusted)
    }

    @Test func noTrustedRootsTrustNothing() throws {
        let chain = try Chain()
        let failure = try #require(throws: X509ChainVerifier.Failure.self) {
            try X509ChainVerifier(trustedRoots: []).verify(
                leaf: chain.leaf,
                intermediates: [chain.intermediate],
                atSeconds: Self.middle
            )
        }
        #expect(failure.reason == .untrusted)
    }

    @Test func aMissingIntermediateBreaksTheChain() throws {
        let chain = try Chain()
        let failure = try #require(throws: X509ChainVerifier.Failure.self) {
            try X509ChainVerifier(trustedRoots: [chain.root]).verify(
                leaf: chain.leaf,
                intermediates: [],
                atSeconds: Self.middle
            )
        }
        #expect(failure.reason == .untrusted)
    }

    @Test func aLeafCannotIssueCertificates() throws {
        // A leaf (CA:FALSE) used as an intermediate must not extend the chain.
        let chain = try Chain()
        let key = try ES256Key.generate()
        let forged = try X509Certificate.Builder(
            commonName: "Forged",
            serialNumber: 9,
            notBefore: Self.start,
            notAfter: Self.end,
            isCertificateAuthority: false
        ).sign(subjectKey: key, issuer: chain.leaf, issuerKey: chain.leafKey)
        let failure = try #require(throws: X509ChainVerifier.Failure.self) {
            try X509ChainVerifier(trustedRoots: [chain.root]).verify(
                leaf: forged,
                intermediates: [chain.leaf, chain.intermediate],
                atSeconds: Self.middle
            )
        }
        #expect(failure.reason == .untrusted)
    }
}
