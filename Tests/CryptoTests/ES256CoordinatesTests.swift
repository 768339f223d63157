import Crypto
import Foundation
import Testing

/// The public point of an ES256 key (a JWK's `x` and `y`) and SHA-256 (its RFC 7638 thumbprint).
@Suite("ES256 coordinates and SHA-256")
struct ES256CoordinatesTests {
    @Test func theCoordinatesAreTheTailOfThePublicKey() throws {
        let key = try ES256Key.generate()
        let (x, y) = try key.publicCoordinates()
        #expect(x.count == 32 && y.count == 32)
        // A P-256 SubjectPublicKeyInfo ends with the uncompressed point 0x04 ‖ X ‖ Y.
        let body = try key.publicKeyPEM().split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        let der = try #require(Data(base64Encoded: body))
        #expect(Array(der.suffix(65)) == [4] + x + y)
        // A key rebuilt from them verifies what the private key signed.
        let rebuilt = try ES256Key(
            pem: "-----BEGIN PUBLIC KEY-----\n" + Data(der.prefix(der.count - 64) + x + y).base64EncodedString()
                + "\n-----END PUBLIC KEY-----\n"
        )
        let message = Array("entitlement".utf8)
        #expect(rebuilt.verify(try key.sign(message), message: message))
    }

    @Test func sha256MatchesTheStandardsVectors() throws {
        // FIPS 180-2 appendix B.1 and the empty message.
        #expect(
            Hex.encode(try SHA256.digest(Array("abc".utf8)))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        )
        #expect(
            Hex.encode(try SHA256.digest([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        )
    }
}
