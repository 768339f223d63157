import Foundation

/// The rules for a configured URL: an absolute `http` or `https` URL with a host and a port in range; and one the
/// server calls (Apple's hosts, a provider's API, the entitlement webhook's receiver) in `VisibleASCII` too, as
/// libcurl is given it. A page's link (a legal link, the public URL) may hold any character a browser takes.
public enum OutboundURL {
    public static func isAbsoluteHTTP(_ text: String) -> Bool {
        guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            return false
        }
        return (1...65_535).contains(url.port ?? 443)
    }

    /// A URL the server calls.
    public static func isValid(_ text: String) -> Bool {
        VisibleASCII.holds(text) && isAbsoluteHTTP(text)
    }
}
