import Testing

@testable import Storage

@Suite("Signing keys begin at moments of their own")
struct SigningKeyStartTests {
    /// Two rotations at once read the same keys and picked the same start, and both callers were told their key
    /// signs from then: a rotation's key is refused at a start another key has, and the rotation picks again.
    @Test func aRotationsKeyIsRefusedAtAStartAnotherKeyHas() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try LedgerTests.open(folder)
        defer { ledger.close() }
        func key(_ kid: String, from: Int64) -> SigningKeyRecord {
            SigningKeyRecord(kid: kid, publicJWK: "{}", privateKeyPEM: nil, createdAt: 1, signsFrom: from)
        }
        #expect(try ledger.signingKeys.insertStartingAlone(key("k-start-1", from: 5_000)))
        #expect(try !ledger.signingKeys.insertStartingAlone(key("k-start-2", from: 5_000)))
        #expect(try ledger.signingKeys.insertStartingAlone(key("k-start-2", from: 5_001)))
        let starts = try ledger.signingKeys.keys().filter { $0.kid.hasPrefix("k-start-") }.map(\.signsFrom)
        #expect(starts == [5_000, 5_001])
    }
}
