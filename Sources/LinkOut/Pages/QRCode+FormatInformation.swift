// MARK: - Format and version information (ISO/IEC 18004:2015 §7.9, §7.10, Annexes C and D)

extension QRCode {
    /// The remainder of `value × x^degree` divided by `generator`, a binary polynomial of that degree.
    static func bchRemainder(_ value: Int, degree: Int, generator: Int) -> Int {
        var remainder = value << degree
        var bit = Int.bitWidth - 1 - remainder.leadingZeroBitCount
        while bit >= degree {
            if remainder & (1 << bit) != 0 { remainder ^= generator << (bit - degree) }
            bit -= 1
        }
        return remainder
    }

    /// The 15 format information bits: level and mask, a (15, 5) BCH code with generator
    /// x¹⁰ + x⁸ + x⁵ + x⁴ + x² + x + 1, masked with 101010000010010 so that no combination is all light (§7.9.1).
    static func formatInformation(level: ErrorCorrectionLevel, mask: Int) -> Int {
        let data = level.formatBits << 3 | mask
        return (data << 10 | bchRemainder(data, degree: 10, generator: 0b101_0011_0111)) ^ 0b101_0100_0001_0010
    }

    /// The 18 version information bits: the version and an (18, 6) BCH code with generator
    /// x¹² + x¹¹ + x¹⁰ + x⁹ + x⁸ + x⁵ + x² + 1, unmasked (§7.10).
    static func versionInformation(_ version: Int) -> Int {
        version << 12 | bchRemainder(version, degree: 12, generator: 0b1_1111_0010_0101)
    }
}
