/// Why a QR Code could not be made.
enum QRCodeError: Error, Equatable, CustomStringConvertible {
    /// More bytes than the largest allowed version holds at the requested level.
    case tooLong(byteCount: Int, capacity: Int)
    /// A forced version outside 1...40.
    case invalidVersion(Int)
    /// A forced mask pattern reference outside 0...7.
    case invalidMask(Int)

    var description: String {
        switch self {
        case .tooLong(let byteCount, let capacity):
            "\(byteCount) bytes do not fit in a QR Code that holds at most \(capacity) bytes at this level"
        case .invalidVersion(let version): "QR Code version \(version) does not exist (1 to 40)"
        case .invalidMask(let mask): "QR Code mask pattern \(mask) does not exist (0 to 7)"
        }
    }
}

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
        var symbol = Symbol(version: version)
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

    /// Character count indicator length for byte mode (§7.4.1, Table 3): 8 bits up to version 9, then 16.
    static func countIndicatorBits(version: Int) -> Int {
        version <= 9 ? 8 : 16
    }

    /// The most bytes a version holds at a level in byte mode: a 4-bit mode indicator, the count, 8 bits a byte.
    static func byteCapacity(version: Int, level: ErrorCorrectionLevel) -> Int {
        (dataCodewordCount(version: version, level: level) * 8 - 4 - countIndicatorBits(version: version)) / 8
    }
}

// MARK: - Data and error correction codewords (§7.4, §7.5, §7.6)

extension QRCode {
    /// The data codewords: byte mode indicator 0100 (§7.4.5, Table 2), the count, the bytes, then the terminator,
    /// zero bits to a codeword boundary and the pad codewords 11101100 and 00010001 in turn (§7.4.9, §7.4.10).
    static func dataCodewords(_ bytes: [UInt8], version: Int, level: ErrorCorrectionLevel) -> [UInt8] {
        let capacityBits = dataCodewordCount(version: version, level: level) * 8
        var bits = BitBuffer()
        bits.append(0b0100, count: 4)
        bits.append(bytes.count, count: countIndicatorBits(version: version))
        for byte in bytes { bits.append(Int(byte), count: 8) }
        bits.append(0, count: min(4, capacityBits - bits.count))
        bits.append(0, count: (8 - bits.count % 8) % 8)
        var codewords = bits.bytes
        var pad: UInt8 = 0b1110_1100
        while codewords.count * 8 < capacityBits {
            codewords.append(pad)
            pad = pad == 0b1110_1100 ? 0b0001_0001 : 0b1110_1100
        }
        return codewords
    }

    /// Splits the data codewords into blocks (shorter blocks first, Table 9), adds each block's error correction
    /// codewords, and interleaves: the data codewords column by column across the blocks, then the error
    /// correction codewords the same way (§7.6).
    static func finalMessage(_ data: [UInt8], _ version: Int, _ level: ErrorCorrectionLevel) -> [UInt8] {
        let blockCount = errorCorrectionBlocks[level]?[version] ?? 1
        let errorCorrectionLength = errorCorrectionCodewordsPerBlock[level]?[version] ?? 0
        let shortLength = data.count / blockCount
        let longBlocks = data.count % blockCount
        let generator = ReedSolomon.generator(degree: errorCorrectionLength)

        var dataBlocks: [ArraySlice<UInt8>] = []
        var errorCorrectionBlocks: [[UInt8]] = []
        var start = data.startIndex
        for index in 0..<blockCount {
            let length = shortLength + (index >= blockCount - longBlocks ? 1 : 0)
            let block = data[start..<(start + length)]
            start += length
            dataBlocks.append(block)
            errorCorrectionBlocks.append(ReedSolomon.remainder(of: block, generator: generator))
        }

        var message: [UInt8] = []
        message.reserveCapacity(totalCodewords(version: version))
        for column in 0..<(shortLength + 1) {
            for block in dataBlocks where column < block.count {
                message.append(block[block.startIndex + column])
            }
        }
        for column in 0..<errorCorrectionLength {
            for block in errorCorrectionBlocks { message.append(block[column]) }
        }
        return message
    }
}

/// Bits appended most significant first (§7.4.1).
private struct BitBuffer {
    private(set) var bytes: [UInt8] = []
    private(set) var count = 0

    mutating func append(_ value: Int, count bitCount: Int) {
        for shift in stride(from: bitCount - 1, through: 0, by: -1) {
            if count % 8 == 0 { bytes.append(0) }
            if (value >> shift) & 1 == 1 { bytes[bytes.count - 1] |= UInt8(0x80 >> (count % 8)) }
            count += 1
        }
    }
}

/// Reed–Solomon error correction over GF(2⁸) with the prime polynomial x⁸ + x⁴ + x³ + x² + 1 (§7.5.2).
enum ReedSolomon {
    /// `exponentials[i]` is αⁱ for i in 0..<255.
    static let exponentials: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 255)
        var value = 1
        for index in 0..<255 {
            table[index] = UInt8(value)
            value <<= 1
            if value & 0x100 != 0 { value ^= 0x11D }
        }
        return table
    }()

    /// `logarithms[x]` is i such that αⁱ = x, for x ≠ 0.
    static let logarithms: [Int] = {
        var table = [Int](repeating: 0, count: 256)
        for (exponent, value) in exponentials.enumerated() { table[Int(value)] = exponent }
        return table
    }()

    static func multiply(_ left: UInt8, _ right: UInt8) -> UInt8 {
        if left == 0 || right == 0 { return 0 }
        return exponentials[(logarithms[Int(left)] + logarithms[Int(right)]) % 255]
    }

    /// The generator polynomial (x − α⁰)(x − α¹)…(x − α^(degree−1)) of Annex A, coefficients from the highest
    /// power down, the leading 1 included.
    static func generator(degree: Int) -> [UInt8] {
        var polynomial: [UInt8] = [1]
        for exponent in 0..<degree {
            let root = exponentials[exponent]
            var product = [UInt8](repeating: 0, count: polynomial.count + 1)
            for (index, coefficient) in polynomial.enumerated() {
                product[index] ^= coefficient
                product[index + 1] ^= multiply(coefficient, root)
            }
            polynomial = product
        }
        return polynomial
    }

    /// The error correction codewords: the remainder of the data polynomial times x^degree divided by the
    /// generator (§7.5.2).
    static func remainder(of data: ArraySlice<UInt8>, generator: [UInt8]) -> [UInt8] {
        let degree = generator.count - 1
        var remainder = [UInt8](repeating: 0, count: degree)
        guard degree > 0 else { return remainder }
        for byte in data {
            let factor = byte ^ remainder[0]
            remainder.removeFirst()
            remainder.append(0)
            for index in 0..<degree { remainder[index] ^= multiply(generator[index + 1], factor) }
        }
        return remainder
    }
}

// MARK: - Format and version information (§7.9, §7.10, Annexes C and D)

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

// MARK: - The module matrix (§6.3, §7.7, §7.8)

extension QRCode {
    /// The data mask condition of Table 10 (§7.8.2), i the row and j the column: where it holds, a module of the
    /// encoding region is inverted.
    static func maskInverts(_ mask: Int, row i: Int, column j: Int) -> Bool {
        switch mask {
        case 0: (i + j) % 2 == 0
        case 1: i % 2 == 0
        case 2: j % 3 == 0
        case 3: (i + j) % 3 == 0
        case 4: (i / 2 + j / 3) % 2 == 0
        case 5: (i * j) % 2 + (i * j) % 3 == 0
        case 6: ((i * j) % 2 + (i * j) % 3) % 2 == 0
        default: ((i + j) % 2 + (i * j) % 3) % 2 == 0
        }
    }

    /// The penalty of §7.8.3.1, Table 11, for a square matrix stored row after row (`true` dark):
    /// N1 = 3 plus 1 per module beyond five for each run of five or more modules of one colour in a row or column;
    /// N2 = 3 for each 2 × 2 block of one colour (a larger block counts as the 2 × 2 blocks it covers);
    /// N3 = 40 for each dark-light-dark-dark-dark-light-dark run in a row or column with four light modules on at
    /// least one side (beyond the edge counts as light: the quiet zone);
    /// N4 = 10 for each full 5 % the dark proportion lies away from 50 %.
    static func penalty(_ dark: [Bool], size: Int) -> Int {
        var score = 0
        var line = [Bool](repeating: false, count: size)
        for index in 0..<size {
            for position in 0..<size { line[position] = dark[index * size + position] }
            score += linePenalty(line)
            for position in 0..<size { line[position] = dark[position * size + index] }
            score += linePenalty(line)
        }
        for row in 0..<(size - 1) {
            for column in 0..<(size - 1) {
                let colour = dark[row * size + column]
                if dark[row * size + column + 1] == colour && dark[(row + 1) * size + column] == colour
                    && dark[(row + 1) * size + column + 1] == colour
                {
                    score += 3
                }
            }
        }
        let darkCount = dark.reduce(0) { $0 + ($1 ? 1 : 0) }
        let total = size * size
        score += 10 * (abs(20 * darkCount - 10 * total) / total)
        return score
    }

    /// N1 and N3 of one row or column.
    static func linePenalty(_ line: [Bool]) -> Int {
        var score = 0
        var run = 1
        for position in 1..<line.count {
            if line[position] == line[position - 1] {
                run += 1
            } else {
                if run >= 5 { score += run - 2 }
                run = 1
            }
        }
        if run >= 5 { score += run - 2 }

        let finderLike: [Bool] = [true, false, true, true, true, false, true]
        guard line.count >= 7 else { return score }
        for start in 0...(line.count - 7) where line[start..<(start + 7)].elementsEqual(finderLike) {
            let lightBefore = (start - 4..<start).allSatisfy { $0 < 0 || !line[$0] }
            let lightAfter = (start + 7..<start + 11).allSatisfy { $0 >= line.count || !line[$0] }
            if lightBefore || lightAfter { score += 40 }
        }
        return score
    }
}

/// The symbol while it is built: modules row after row, and which of them are function patterns or reserved for
/// format and version information (everything outside the encoding region, §6.3.7).
private struct Symbol {
    let version: Int
    let size: Int
    var dark: [Bool]
    var isFunction: [Bool]

    init(version: Int) {
        self.version = version
        size = 17 + 4 * version
        dark = [Bool](repeating: false, count: size * size)
        isFunction = [Bool](repeating: false, count: size * size)

        // Timing patterns (§6.3.5): row 6 and column 6 alternate, dark on even coordinates; the finders drawn next
        // cover their ends.
        for index in 0..<size {
            setFunction(6, index, dark: index % 2 == 0)
            setFunction(index, 6, dark: index % 2 == 0)
        }
        // Finder patterns (§6.3.3): concentric 7 × 7 dark, 5 × 5 light and 3 × 3 dark squares in three corners,
        // each with a one-module light separator on its inner sides (§6.3.4).
        for (row, column) in [(3, 3), (3, size - 4), (size - 4, 3)] {
            for dy in -4...4 {
                for dx in -4...4 {
                    let distance = max(abs(dx), abs(dy))
                    setFunctionIfInside(row + dy, column + dx, dark: distance != 2 && distance != 4)
                }
            }
        }
        // Alignment patterns (§6.3.6): 5 × 5 dark, 3 × 3 light and a dark centre at every pair of Table E.1
        // coordinates, except the three that would overlap a finder pattern.
        let centres = QRCode.alignmentPatternCentres[version]
        if let first = centres.first, let last = centres.last {
            for row in centres {
                for column in centres {
                    if (row == first && column == first) || (row == first && column == last)
                        || (row == last && column == first)
                    {
                        continue
                    }
                    for dy in -2...2 {
                        for dx in -2...2 { setFunction(row + dy, column + dx, dark: max(abs(dx), abs(dy)) != 1) }
                    }
                }
            }
        }
        // Format information (§7.9.1): 15 modules beside the top-left finder, 8 beside the top-right and 7 beside
        // the bottom-left with the dark module above them, left light until drawn.
        for index in 0...8 where index != 6 {
            reserve(8, index)
            reserve(index, 8)
        }
        for index in 0..<8 {
            reserve(8, size - 1 - index)
            reserve(size - 1 - index, 8)
        }
        // Version information (§7.10): two 6 × 3 blocks beside the top-right and bottom-left finders.
        if version >= 7 {
            for major in 0..<6 {
                for minor in (size - 11)..<(size - 8) {
                    reserve(major, minor)
                    reserve(minor, major)
                }
            }
        }
    }

    private mutating func setFunction(_ row: Int, _ column: Int, dark isDark: Bool) {
        dark[row * size + column] = isDark
        isFunction[row * size + column] = true
    }

    private mutating func setFunctionIfInside(_ row: Int, _ column: Int, dark isDark: Bool) {
        if (0..<size).contains(row) && (0..<size).contains(column) { setFunction(row, column, dark: isDark) }
    }

    private mutating func reserve(_ row: Int, _ column: Int) {
        setFunction(row, column, dark: false)
    }

    /// Places the codewords' bits, most significant first, in two-module-wide columns from the right edge, going
    /// up and down in turn, right module before left, skipping function modules and the vertical timing column;
    /// modules left over are the light remainder bits (§7.7.3).
    mutating func place(_ codewords: [UInt8]) {
        let bitCount = codewords.count * 8
        var bitIndex = 0
        var right = size - 1
        var upward = true
        while right >= 1 {
            if right == 6 { right = 5 }
            for step in 0..<size {
                let row = upward ? size - 1 - step : step
                for column in [right, right - 1] where !isFunction[row * size + column] {
                    if bitIndex < bitCount {
                        dark[row * size + column] = (codewords[bitIndex / 8] >> (7 - bitIndex % 8)) & 1 == 1
                        bitIndex += 1
                    }
                }
            }
            upward.toggle()
            right -= 2
        }
    }

    /// Inverts the encoding region's modules where the mask condition holds (§7.8.2); function patterns stay.
    mutating func applyMask(_ mask: Int) {
        for row in 0..<size {
            for column in 0..<size where !isFunction[row * size + column] {
                if QRCode.maskInverts(mask, row: row, column: column) { dark[row * size + column].toggle() }
            }
        }
    }

    /// Draws the format information twice (§7.9.1, Figure 25), bit 14 the most significant: bits 0–7 up column 8
    /// from row 0 (skipping the timing row) and along row 8 from the right edge leftwards; bits 8–14 along row 8
    /// leftwards from column 7 (skipping the timing column) and down column 8 from row size − 7; and the dark
    /// module at row size − 8, column 8.
    mutating func drawFormatInformation(_ bits: Int) {
        for index in 0..<15 {
            let isDark = (bits >> index) & 1 == 1
            // Copy beside the top-left finder.
            switch index {
            case 0..<6: dark[index * size + 8] = isDark
            case 6: dark[7 * size + 8] = isDark
            case 7: dark[8 * size + 8] = isDark
            case 8: dark[8 * size + 7] = isDark
            default: dark[8 * size + 14 - index] = isDark
            }
            // Copy split between the top-right and bottom-left finders.
            if index < 8 {
                dark[8 * size + size - 1 - index] = isDark
            } else {
                dark[(size - 15 + index) * size + 8] = isDark
            }
        }
        dark[(size - 8) * size + 8] = true
    }

    /// Draws the version information twice (§7.10, Figure 27), bit 0 the least significant: bit i at row i / 3,
    /// column size − 11 + i mod 3 beside the top-right finder, and transposed beside the bottom-left one.
    mutating func drawVersionInformation(_ bits: Int) {
        for index in 0..<18 {
            let isDark = (bits >> index) & 1 == 1
            let major = index / 3
            let minor = size - 11 + index % 3
            dark[major * size + minor] = isDark
            dark[minor * size + major] = isDark
        }
    }
}
