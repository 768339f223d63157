import Testing

@testable import HTTPServer

@Suite("Connections per client")
struct ClientConnectionCountsTests {
    /// The addresses of one IPv6 /64 are one client, as the rate limits count them; another /64 and IPv4 apart.
    @Test func anIPv6ClientCountsByItsSlash64() {
        let counts = ClientConnectionCounts(cap: 2)
        #expect(counts.admit("2001:db8:1:2::1"))
        #expect(counts.admit("2001:db8:1:2:aaaa::2"))
        #expect(!counts.admit("2001:db8:1:2:ffff:ffff:ffff:9"))
        #expect(counts.admit("2001:db8:1:3::1"))
        #expect(counts.admit("203.0.113.7") && counts.admit("203.0.113.7") && !counts.admit("203.0.113.7"))
        counts.release("2001:db8:1:2::1")
        #expect(counts.admit("2001:db8:1:2::7"))
        #expect(!counts.admit("2001:db8:1:2::8"))
    }
}
