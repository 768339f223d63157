import Foundation
import HTTPServer

/// Who the client is: the socket's peer, or — only when that peer is a trusted proxy — the nearest address in
/// `X-Forwarded-For` that is not one of our proxies (anything further left could be forged by the client).
enum ClientAddress {
    static func resolve(_ request: HTTPRequest, trustedProxies: Set<String>) -> String {
        let peer = request.remoteAddress
        guard trustedProxies.contains(peer), let forwarded = request.headers["x-forwarded-for"] else { return peer }
        let hops = forwarded.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
            !$0.isEmpty
        }
        for hop in hops.reversed() where !trustedProxies.contains(hop) {
            return hop
        }
        return hops.first ?? peer
    }
}
