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

    @Test func keysOfABlockAndLongerMatchRFC4231AndPython() {
        // RFC 4231 cases 6 and 7: a 131-byte key is hashed first.
        let long = HMACSHA256(key: [UInt8](repeating: 0xaa, count: 131))
        #expect(
            Self.hex(long.authenticate("Test Using Larger Than Block-Size Key - Hash Key First"))
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        )
        let data =
            "This is a test using a larger than block-size key and a larger than block-size data. The key needs "
            + "to be hashed before being used by the HMAC algorithm."
        #expect(Self.hex(long.authenticate(data)) == "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2")
        // A key of exactly one block is used as it is; one byte more is hashed (values from Python's hmac).
        let block = HMACSHA256(key: (0..<64).map { UInt8($0) }).authenticate("exactly one block of key")
        #expect(Self.hex(block) == "aed89a53f83495834369f6c764db660e0e41d224347eb2b6f2054241399e36e2")
        let over = HMACSHA256(key: (0..<65).map { UInt8($0) }).authenticate("one byte over a block of key")
        #expect(Self.hex(over) == "71f187949fa0f711f958715e6e173bc75ed3b174fc56575af118483a668f02cf")
    }

    @Test func emptyKeysAndMessagesStillAuthenticate() {
        let mac = HMACSHA256(key: Array("key".utf8))
        #expect(mac.authenticate("") == mac.authenticate(bytes: []))
        let keyed = "5d5d139563c95b5967b9bd9a8c9b233a9dedb45072794cd232dc1b74832607d0"
        #expect(Self.hex(mac.authenticate("")) == keyed)
        // An empty key is a block of zeros (RFC 2104), as any key shorter than a block is padded.
        let unkeyed = "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad"
        #expect(Self.hex(HMACSHA256(key: []).authenticate("")) == unkeyed)
    }
}
