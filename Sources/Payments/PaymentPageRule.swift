/// Where a payment provider may send the person: its payment page goes into a `Location` header, so only an
/// `https` address or one of linkout's own paths (never `javascript:` or another scheme, never a scheme-relative
/// `//host`), in printable ASCII (a control character would end the header and start another one), and no longer
/// than browsers and proxies take (8 KiB; a provider's page address is a few hundred characters). A provider's
/// configured page (Paddle's hosted checkout) is held to it at start-up, so a payment never finds it refused.
public enum PaymentPageRule {
    public static let longest = 8192

    public static func allows(_ url: String) -> Bool {
        let bytes = url.utf8
        guard bytes.count <= longest, bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return false }
        if url.hasPrefix("https://") { return bytes.count > "https://".utf8.count }
        return url.hasPrefix("/") && !url.hasPrefix("//") && !url.hasPrefix("/\\")
    }
}
