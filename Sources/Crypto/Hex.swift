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

extension Hex {
    /// Lowercase hex digits (as webhook signatures are sent) to bytes; nil for an odd count or any other character.
    public static func decodeLowercase(_ text: some StringProtocol) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }
}
