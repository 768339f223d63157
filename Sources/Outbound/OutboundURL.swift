import Foundation

/// The rule for a URL the server calls (a configured service: Apple's hosts, a provider's API, the entitlement
/// webhook's receiver): absolute `http` or `https` with a host, and in visible ASCII only. libcurl takes the text
/// as it is, where Foundation's `URL` quietly percent-encodes a space or a control character in a path: a URL
/// pasted with a trailing space passed as valid, and every call to it then failed ("URL using bad/illegal
/// format").
public enum OutboundURL {
    public static func isValid(_ text: String) -> Bool {
        guard text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }), let url = URL(string: text),
            url.scheme == "http" || url.scheme == "https", url.host != nil
        else { return false }
        return (1...65_535).contains(url.port ?? 443)
    }
}
