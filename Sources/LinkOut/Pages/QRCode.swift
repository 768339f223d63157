/// A QR Code symbol (ISO/IEC 18004:2015) carrying bytes in byte mode, so that any URL encodes as it is without
/// choosing between character sets.
struct QRCode: Sendable {
    /// Error correction level (§7.5.1): roughly 7, 15, 25 and 30 % of the codewords can be restored.
    enum ErrorCorrectionLevel: Int, Sendable, CaseIterable {
        case low, medium, quartile, high

        /// The level's two bits in the format information (§7.9.1, Table 12): L 01, M 00, Q 11, H 10.
        var formatBits: Int {
            switch self {
            case .low: 0b01
            case .medium: 0b00
            case .quartile: 0b11
            case .high: 0b10
            }
        }
    }

    /// 1...40; the symbol is `17 + 4 × version` modules wide (§6.3.1).
    let version: Int
    let level: ErrorCorrectionLevel
    /// The data mask pattern reference (§7.8.2, Table 10), 0...7.
    let mask: Int
    /// Modules per side, without the quiet zone.
    let size: Int
    /// `modules[row][column]`, `true` for a dark module.
    let modules: [[Bool]]

    /// Encodes `bytes` in the smallest version that holds them at `level`, with the mask pattern of lowest penalty.
    init(_ bytes: [UInt8], level: ErrorCorrectionLevel = .medium) throws(QRCodeError) {
        try self.init(bytes, level: level, version: nil, mask: nil)
    }

    /// Encodes `bytes`, optionally in a given version and with a given mask pattern (both chosen as above when nil).
    init(_ bytes: [UInt8], level: ErrorCorrectionLevel, version forcedVersion: Int?, mask forcedMask: Int?)
        throws(QRCodeError)
    {
        if let forcedMask, !(0...7).contains(forcedMask) { throw .invalidMask(forcedMask) }
        let version: Int
        if let forcedVersion {
            guard (1...40).contains(forcedVersion) else { throw .invalidVersion(forcedVersion) }
            let capacity = Self.byteCapacity(version: forcedVersion, level: level)
            guard bytes.count <= capacity else { throw .tooLong(byteCount: bytes.count, capacity: capacity) }
            version = forcedVersion
        } else {
            guard let smallest = (1...40).first(where: { bytes.count <= Self.byteCapacity(version: $0, level: level) })
            else {
                throw .tooLong(byteCount: bytes.count, capacity: Self.byteCapacity(version: 40, level: level))
            }
            version = smallest
        }

        let codewords = Self.finalMessage(Self.dataCodewords(bytes, version: version, level: level), version, level)
        var symbol = QRSymbol(version: version)
        symbol.place(codewords)

        let mask: Int
        if let forcedMask {
            mask = forcedMask
        } else {
            // §7.8.3.1: the pattern with the lowest penalty is chosen. §7.1 masks and evaluates in step 6 and only
            // adds format and version information in step 7, so those areas (and the dark module placed with the
            // format information) are still light while the patterns are scored. Ties go to the lower reference.
            var best = (mask: 0, penalty: Int.max)
            for candidate in 0..<8 {
                var masked = symbol
                masked.applyMask(candidate)
                let penalty = Self.penalty(masked.dark, size: masked.size)
                if penalty < best.penalty { best = (candidate, penalty) }
            }
            mask = best.mask
        }
        symbol.applyMask(mask)
        symbol.drawFormatInformation(Self.formatInformation(level: level, mask: mask))
        if version >= 7 { symbol.drawVersionInformation(Self.versionInformation(version)) }

        self.version = version
        self.level = level
        self.mask = mask
        self.size = symbol.size
        self.modules = (0..<symbol.size).map { row in
            Array(symbol.dark[(row * symbol.size)..<((row + 1) * symbol.size)])
        }
    }

    /// Encodes the UTF-8 bytes of `text`.
    init(_ text: String, level: ErrorCorrectionLevel = .medium) throws(QRCodeError) {
        try self.init(Array(text.utf8), level: level)
    }

    subscript(row: Int, column: Int) -> Bool {
        modules[row][column]
    }
}
