/// Classes of ASCII bytes the checks of outside text share: the ids Apple and the payment providers make, a
/// currency code, a host name.
public enum ASCIIBytes {
    public static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
    }

    public static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    /// Letters, digits, `-` and `_`: what an `externalPurchaseId` and a provider's id are made of.
    public static func isIdentifier(_ byte: UInt8) -> Bool {
        isLetter(byte) || isDigit(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }
}
