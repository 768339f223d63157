/// Bytes as hexadecimal text: MAC signatures in webhook headers, ids derived from HMACs, fingerprints.
public enum Hex {
    /// Two digits a byte, lowercase unless asked, joined by `separator`.
    public static func encode(_ bytes: some Sequence<UInt8>, uppercase: Bool = false, separator: String = "")
        -> String
    {
        let digits = Array((uppercase ? "0123456789ABCDEF" : "0123456789abcdef").utf8)
        return bytes.map { byte in
            String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]], as: UTF8.self)
        }.joined(separator: separator)
    }
}
