import Foundation

/// Hosts a `publicURL` cannot have: StoreKit opens the link in the person's browser, on their phone, anywhere,
/// so loopback, private (RFC 1918, RFC 4193), carrier-grade NAT (RFC 6598), link-local and unspecified
/// addresses (also as IPv4-mapped IPv6), `localhost` and mDNS `.local` names reach no customer.
enum PublicHost {
    static func isUnreachable(_ host: String) -> Bool {
        let name = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if name.isEmpty || name == "localhost" || name.hasSuffix(".localhost") || name.hasSuffix(".local") {
            return true
        }
        if let octets = ipv4(name.hasPrefix("::ffff:") ? String(name.dropFirst(7)) : name) {
            switch (octets[0], octets[1]) {
            case (0, _), (10, _), (127, _), (169, 254), (192, 168): return true
            case (172, let second): return (16...31).contains(second)
            case (100, let second): return (64...127).contains(second)
            default: return false
            }
        }
        guard name.contains(":") else { return false }
        // IPv6: unspecified and loopback, unique local fc00::/7, link-local fe80::/10.
        if name == "::" || name == "::1" { return true }
        let first = name.split(separator: ":", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        guard let group = UInt16(first.isEmpty ? "0" : first, radix: 16) else { return false }
        return group & 0xFE00 == 0xFC00 || group & 0xFFC0 == 0xFE80
    }

    private static func ipv4(_ name: String) -> [Int]? {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        let octets = parts.compactMap { part in Int(part).flatMap { (0...255).contains($0) ? $0 : nil } }
        return octets.count == 4 ? octets : nil
    }
}
