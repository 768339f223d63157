import Testing

@testable import LinkOut

/// Limits count an IPv6 client by its /64: one line or host gets a whole /64 and could rotate through it.
@Suite("Client address")
struct ClientAddressTests {
    @Test func ipv6CountsByItsSlash64AndIpv4AsItIs() {
        #expect(ClientAddress.limitKey("203.0.113.7") == "203.0.113.7")
        #expect(ClientAddress.limitKey("2001:db8:1:2:aaaa::1") == "2001:db8:1:2::/64")
        #expect(ClientAddress.limitKey("2001:db8:1:2:ffff:ffff:ffff:ffff") == ClientAddress.limitKey("2001:db8:1:2::9"))
        #expect(ClientAddress.limitKey("2001:db8:1:3::9") != ClientAddress.limitKey("2001:db8:1:2::9"))
        #expect(ClientAddress.limitKey("::ffff:203.0.113.7") == "203.0.113.7")
        #expect(ClientAddress.limitKey("::1") == "0:0:0:0::/64")
        #expect(ClientAddress.limitKey("not an address") == "not an address")
    }
}
