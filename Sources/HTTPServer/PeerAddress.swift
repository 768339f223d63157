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

    /// An IPv4-mapped IPv6 address as its IPv4 address; any other as it is.
    static func unmapped(_ text: String) -> String {
        text.hasPrefix("::ffff:") && !text.dropFirst(7).contains(":") ? String(text.dropFirst(7)) : text
    }
}
