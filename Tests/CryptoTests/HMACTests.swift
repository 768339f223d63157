import Crypto
import Testing

@Suite("HMAC-SHA256")
struct HMACTests {
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    @Test func matchesRFC4231() {
        // RFC 4231 test cases 1 and 2; the second key is shorter than the message, the first longer.
        let first = HMACSHA256(key: [UInt8](repeating: 0x0b, count: 20)).authenticate("Hi There")
        #expect(Self.hex(first) == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        let second = HMACSHA256(key: Array("Jefe".utf8)).authenticate("what do ya want for nothing?")
        #expect(Self.hex(second) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func emptyKeysAndMessagesStillAuthenticate() {
        let mac = HMACSHA256(key: Array("key".utf8))
        #expect(mac.authenticate("") == mac.authenticate(bytes: []))
        let keyed = "5d5d139563c95b5967b9bd9a8c9b233a9dedb45072794cd232dc1b74832607d0"
        #expect(Self.hex(mac.authenticate("")) == keyed)
        // An empty key takes OpenSSL's one-shot path.
        let unkeyed = "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad"
        #expect(Self.hex(HMACSHA256(key: []).authenticate("")) == unkeyed)
    }
}
