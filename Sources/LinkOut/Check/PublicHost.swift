import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Hosts a `publicURL` cannot have: StoreKit opens the link in the person's browser, on their phone, anywhere,
/// so loopback, private (RFC 1918, RFC 4193), carrier-grade NAT (RFC 6598), link-local, multicast, broadcast and
/// unspecified addresses however spelled (`127.1`, `0x7f000001`, IPv4-mapped IPv6), `localhost` and mDNS
/// `.local` names reach no customer.
enum PublicHost {
    static func isUnreachable(_ host: String) -> Bool {
        var name = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if name.hasSuffix(".") { name.removeLast() }  // a fully qualified name is the same host
        if name.isEmpty || name == "localhost" || name.hasSuffix(".localhost") || name.hasSuffix(".local") {
            return true
        }
        if let octets = ipv4(name) { return isUnreachable(v4: octets) }
        var v6 = in6_addr()
        guard name.contains(":"), inet_pton(AF_INET6, name, &v6) == 1 else { return false }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
            return isUnreachable(v4: Array(bytes[12..<16]))  // IPv4-mapped
        }
        let unspecifiedOrLoopback = bytes[0..<15].allSatisfy { $0 == 0 } && bytes[15] <= 1
        // Unique local fc00::/7, link-local fe80::/10, multicast ff00::/8.
        return unspecifiedOrLoopback || bytes[0] & 0xFE == 0xFC || (bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80)
            || bytes[0] == 0xFF
    }

    /// This machine's own host however spelled: `localhost`, 127.0.0.0/8 (`127.1`, `0x7f000001`), `::1` and
    /// IPv4-mapped loopback.
    static func isLoopback(_ host: String) -> Bool {
        var name = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if name.hasSuffix(".") { name.removeLast() }
        if name == "localhost" { return true }
        if let octets = ipv4(name) { return octets[0] == 127 }
        var v6 = in6_addr()
        guard name.contains(":"), inet_pton(AF_INET6, name, &v6) == 1 else { return false }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF { return bytes[12] == 127 }
        return bytes[0..<15].allSatisfy { $0 == 0 } && bytes[15] == 1
    }

    private static func isUnreachable(v4 octets: [UInt8]) -> Bool {
        switch (octets[0], octets[1]) {
        case (0, _), (10, _), (127, _), (169, 254), (192, 168): return true
        case (172, let second): return (16...31).contains(second)
        case (100, let second): return (64...127).contains(second)
        case (let first, _) where first >= 224: return true  // multicast, reserved, broadcast
        default: return false
        }
    }

    /// The address a name spells as IPv4 in any form the resolver takes (`127.1`, `2130706433`, `0x7f000001`,
    /// `0177.0.0.1`), or nil for a name that is not one.
    private static func ipv4(_ name: String) -> [UInt8]? {
        guard !name.contains(":"), let first = name.first, first.isNumber else { return nil }
        var address = in_addr()
        guard inet_aton(name, &address) != 0 else { return nil }
        return withUnsafeBytes(of: &address.s_addr) { Array($0) }
    }
}
