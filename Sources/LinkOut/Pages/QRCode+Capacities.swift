// MARK: - Capacities (Tables 1, 7 and 9)

extension QRCode {
    /// Error correction codewords per block, by level and version (Table 9); index 0 is unused.
    static let errorCorrectionCodewordsPerBlock: [ErrorCorrectionLevel: [Int]] = [
        .low: [
            0, 7, 10, 15, 20, 26, 18, 20, 24, 30, 18, 20, 24, 26, 30, 22, 24, 28, 30, 28, 28,
            28, 28, 30, 30, 26, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30,
        ],
        .medium: [
            0, 10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26,
            26, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28,
        ],
        .quartile: [
            0, 13, 22, 18, 26, 18, 24, 18, 22, 20, 24, 28, 26, 24, 20, 30, 24, 28, 28, 26, 30,
            28, 30, 30, 30, 30, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30,
        ],
        .high: [
            0, 17, 28, 22, 16, 22, 28, 26, 26, 24, 28, 24, 28, 22, 24, 24, 30, 28, 28, 26, 28,
            30, 24, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30,
        ],
    ]

    /// Error correction blocks, by level and version (Table 9, both block sizes together); index 0 is unused.
    static let errorCorrectionBlocks: [ErrorCorrectionLevel: [Int]] = [
        .low: [
            0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 4, 6, 6, 6, 6, 7, 8,
            8, 9, 9, 10, 12, 12, 12, 13, 14, 15, 16, 17, 18, 19, 19, 20, 21, 22, 24, 25,
        ],
        .medium: [
            0, 1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16,
            17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49,
        ],
        .quartile: [
            0, 1, 1, 2, 2, 4, 4, 6, 6, 8, 8, 8, 10, 12, 16, 12, 17, 16, 18, 21, 20,
            23, 23, 25, 27, 29, 34, 34, 35, 38, 40, 43, 45, 48, 51, 53, 56, 59, 62, 65, 68,
        ],
        .high: [
            0, 1, 1, 2, 4, 4, 4, 5, 6, 8, 8, 11, 11, 16, 16, 18, 16, 19, 21, 25, 25,
            25, 34, 30, 32, 35, 37, 40, 42, 45, 48, 51, 54, 57, 60, 63, 66, 70, 74, 77, 81,
        ],
    ]

    /// Row and column coordinates of alignment pattern centres (Annex E, Table E.1); index 0 is unused.
    static let alignmentPatternCentres: [[Int]] = [
        [], [], [6, 18], [6, 22], [6, 26], [6, 30], [6, 34],
        [6, 22, 38], [6, 24, 42], [6, 26, 46], [6, 28, 50], [6, 30, 54], [6, 32, 58], [6, 34, 62],
        [6, 26, 46, 66], [6, 26, 48, 70], [6, 26, 50, 74], [6, 30, 54, 78], [6, 30, 56, 82], [6, 30, 58, 86],
        [6, 34, 62, 90], [6, 28, 50, 72, 94], [6, 26, 50, 74, 98], [6, 30, 54, 78, 102], [6, 28, 54, 80, 106],
        [6, 32, 58, 84, 110], [6, 30, 58, 86, 114], [6, 34, 62, 90, 118], [6, 26, 50, 74, 98, 122],
        [6, 30, 54, 78, 102, 126], [6, 26, 52, 78, 104, 130], [6, 30, 56, 82, 108, 134], [6, 34, 60, 86, 112, 138],
        [6, 30, 58, 86, 114, 142], [6, 34, 62, 90, 118, 146], [6, 30, 54, 78, 102, 126, 150],
        [6, 24, 50, 76, 102, 128, 154], [6, 28, 54, 80, 106, 132, 158], [6, 32, 58, 84, 110, 136, 162],
        [6, 26, 54, 82, 110, 138, 166], [6, 30, 58, 86, 114, 142, 170],
    ]

    /// Modules of the encoding region: the whole symbol less the finder patterns with their separators, the
    /// timing patterns, the alignment patterns, the format information with the dark module and, from version 7,
    /// the version information (Table 1, remainder bits included).
    static func dataModuleCount(version: Int) -> Int {
        let size = 17 + 4 * version
        // Three finders with separators (8 × 8 each), two timing patterns between them, 31 format modules.
        var count = size * size - 3 * 64 - 2 * (size - 16) - 31
        let centres = alignmentPatternCentres[version].count
        if centres > 0 {
            // All n² centres but the three under finder patterns; the 2(n − 2) on row or column 6 overlap the
            // timing pattern by 5 modules each.
            count -= 25 * (centres * centres - 3) - 10 * (centres - 2)
        }
        if version >= 7 { count -= 36 }
        return count
    }

    /// Codewords of the symbol, data and error correction together (Table 1); leftover modules are remainder bits.
    static func totalCodewords(version: Int) -> Int {
        dataModuleCount(version: version) / 8
    }

    static func dataCodewordCount(version: Int, level: ErrorCorrectionLevel) -> Int {
        let perBlock = errorCorrectionCodewordsPerBlock[level]?[version] ?? 0
        let blocks = errorCorrectionBlocks[level]?[version] ?? 0
        return totalCodewords(version: version) - perBlock * blocks
    }

    /// Character count indicator length for byte mode (ISO/IEC 18004:2015 §7.4.1, Table 3): 8 bits up to version 9,
    /// then 16.
    static func countIndicatorBits(version: Int) -> Int {
        version <= 9 ? 8 : 16
    }

    /// The most bytes a version holds at a level in byte mode: a 4-bit mode indicator, the count, 8 bits a byte.
    static func byteCapacity(version: Int, level: ErrorCorrectionLevel) -> Int {
        (dataCodewordCount(version: version, level: level) * 8 - 4 - countIndicatorBits(version: version)) / 8
    }
}
