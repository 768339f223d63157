#if canImport(Glibc)
import Glibc
#endif

/// A peer's address as the server writes it (`HTTPRequest.remoteAddress`): IPv6 in its canonical text, and an
/// IPv4 client of a dual-stack socket (`::ffff:a.b.c.d`) as the IPv4 address it is. Anything compared with a
/// peer's address (trusted proxies) is written the same way, or it never matches.
public enum PeerAddress {
    /// `text` (an IPv4 or IPv6 address) in the server's form; nil when it is not an address.
    public static func canonical(_ text: String) -> String? {
        var v4 = in_addr()
        var v6 = in6_addr()
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let rendered: Bool
        if inet_pton(AF_INET, text, &v4) == 1 {
            rendered = inet_ntop(AF_INET, &v4, &buffer, socklen_t(buffer.count)) != nil
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            rendered = inet_ntop(AF_INET6, &v6, &buffer, socklen_t(buffer.count)) != nil
        } else {
            return nil
        }
        guard rendered else { return nil }
        return unmapped(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// The client an address counts as in limits (the connection cap here, rate limits and throttles in the
    /// application): an IPv4 address as it is, an IPv6 address by its /64 (one subscriber line or host gets a
    /// whole /64 and could rotate through it); an IPv4-mapped address counts as IPv4.
    public static func clientKey(_ address: String) -> String {
        guard address.contains(":") else { return address }
        var bytes = in6_addr()
        guard inet_pton(AF_INET6, address, &bytes) == 1 else { return address }
        let octets = withUnsafeBytes(of: &bytes) { Array($0) }
        if octets[0..<10].allSatisfy({ $0 == 0 }) && octets[10] == 0xff && octets[11] == 0xff {
            return octets[12..<16].map { String($0) }.joined(separator: ".")
        }
        let groups = stride(from: 0, to: 8, by: 2).map {
            String(UInt16(octets[$0]) << 8 | UInt16(octets[$0 + 1]), radix: 16)
        }
        return groups.joined(separator: ":") + "::/64"
    }

    /// An IPv4-mapped IPv6 address as its IPv4 address; any other as it is.
    static func unmapped(_ text: String) -> String {
        text.hasPrefix("::ffff:") && !text.dropFirst(7).contains(":") ? String(text.dropFirst(7)) : text
    }
}
