import Foundation
import HTTPServer

/// Who the client is: the socket's peer, or — only when that peer is a trusted proxy — the nearest address in
/// `X-Forwarded-For` that is not one of our proxies (anything further left could be forged by the client). The
/// header's lines are one list in order (RFC 9110 §5.3: a proxy may add a line of its own rather than append to
/// the client's), and a hop that is no IP address is no client: the proxy itself is counted then.
enum ClientAddress {
    static func resolve(_ request: HTTPRequest, trustedProxies: Set<String>) -> String {
        let peer = request.remoteAddress
        let lines = request.headers.values(for: "x-forwarded-for")
        guard trustedProxies.contains(peer), !lines.isEmpty else { return peer }
        let hops = lines.joined(separator: ",").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }.filter { !$0.isEmpty }
        for hop in hops.reversed() where !trustedProxies.contains(hop) {
            return address(in: hop) ?? peer
        }
        return hops.first.flatMap(address(in:)) ?? peer
    }

    /// The IP address a hop names, without the port or zone some proxies add (`203.0.113.5:41234`,
    /// `[2001:db8::1]:443`, `fe80::1%eth0`); nil for anything else.
    static func address(in hop: String) -> String? {
        var text = Substring(hop)
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            text = text[text.index(after: text.startIndex)..<close]
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            text = text[..<colon]
        }
        if let zone = text.firstIndex(of: "%") { text = text[..<zone] }
        let candidate = String(text)
        var v4 = in_addr()
        var v6 = in6_addr()
        guard inet_pton(AF_INET, candidate, &v4) == 1 || inet_pton(AF_INET6, candidate, &v6) == 1 else { return nil }
        return candidate
    }

    /// The key limits count a client by: an IPv4 address as it is, an IPv6 address by its /64 (one subscriber
    /// line or host gets a whole /64 and could rotate through it; an IPv4-mapped address counts as IPv4).
    static func limitKey(_ address: String) -> String {
        PeerAddress.clientKey(address)
    }

    /// The client a request counts against in rate limits and throttles.
    static func limitKey(_ request: HTTPRequest, trustedProxies: Set<String>) -> String {
        limitKey(resolve(request, trustedProxies: trustedProxies))
    }
}
