import Testing

@testable import LinkOut

/// The QR Code encoder against symbols made by other encoders, the standard's tables and worked values, and the
/// structure every symbol must have; decoders read what it makes only during development, so nothing here needs one.
@Suite("QR Code")
struct QRCodeTests {
    /// The first `length` bytes of the page's example URL, its code continued as long as needed.
    static func url(_ length: Int) -> [UInt8] {
        let code = String(repeating: "abcdefghijklmnopqrstuvwxyz234567", count: 100)
        return Array(("https://example.com/open?code=" + code).utf8.prefix(length))
    }

    /// Rows of `#` (dark) and `.` (light).
    static func matrix(_ art: String) -> [[Bool]] {
        art.split(separator: "\n").map { row in row.map { $0 == "#" } }
    }

    /// A binary polynomial's remainder after division by `generator`, written out here apart from the encoder's.
    static func remainder(_ value: Int, dividedBy generator: Int) -> Int {
        let degree = Int.bitWidth - 1 - generator.leadingZeroBitCount
        var value = value
        while value != 0 && Int.bitWidth - 1 - value.leadingZeroBitCount >= degree {
            value ^= generator << (Int.bitWidth - 1 - value.leadingZeroBitCount - degree)
        }
        return value
    }

    /// Reads bits from module positions, bit 0 at the first position.
    static func read(_ code: QRCode, _ positions: [(row: Int, column: Int)]) -> Int {
        var bits = 0
        for (index, position) in positions.enumerated() where code[position.row, position.column] {
            bits |= 1 << index
        }
        return bits
    }

    /// Where the two copies of the format information lie, bit 0 first (ISO/IEC 18004:2015 §7.9.1, Figure 25).
    static func formatPositions(size: Int) -> (first: [(row: Int, column: Int)], second: [(row: Int, column: Int)]) {
        let first =
            (0...5).map { (row: $0, column: 8) } + [(row: 7, column: 8), (row: 8, column: 8), (row: 8, column: 7)]
            + (9...14).map { (row: 8, column: 14 - $0) }
        let second = (0...7).map { (row: 8, column: size - 1 - $0) } + (8...14).map { (row: size - 15 + $0, column: 8) }
        return (first, second)
    }

    /// Where the two copies of the version information lie, bit 0 first (§7.10, Figure 27).
    static func versionPositions(size: Int) -> (
        topRight: [(row: Int, column: Int)], bottomLeft: [(row: Int, column: Int)]
    ) {
        let topRight = (0..<18).map { (row: $0 / 3, column: size - 11 + $0 % 3) }
        return (topRight, topRight.map { (row: $0.column, column: $0.row) })
    }

    // MARK: Symbols made by other encoders

    @Test func everyMaskPatternMatchesSegno() throws {
        for (mask, art) in QRCodeVectors.version1Masks.enumerated() {
            let code = try QRCode(Self.url(14), level: .medium, version: 1, mask: mask)
            #expect(code.modules == Self.matrix(art), "mask \(mask)")
        }
    }

    @Test func automaticVersionAndMaskMatchSegno() throws {
        let cases: [(bytes: Int, level: QRCode.ErrorCorrectionLevel, version: Int, mask: Int, art: String)] = [
            (14, .medium, 1, 0, QRCodeVectors.version1Masks[0]),
            (84, .medium, 5, 2, QRCodeVectors.version5Medium),
            (64, .high, 7, 7, QRCodeVectors.version7High),
            (271, .low, 10, 2, QRCodeVectors.version10Low),
        ]
        for example in cases {
            let code = try QRCode(Self.url(example.bytes), level: example.level)
            #expect(code.version == example.version)
            #expect(code.mask == example.mask)
            #expect(code.size == 17 + 4 * example.version)
            #expect(code.modules == Self.matrix(example.art), "version \(example.version)")
        }
    }

    @Test func paddedSymbolMatchesPythonQRCode() throws {
        let code = try QRCode(Self.url(66), level: .medium, version: 5, mask: 7)
        #expect(code.modules == Self.matrix(QRCodeVectors.exampleURLMedium))
        #expect(try QRCode(Self.url(66)).modules == code.modules)
    }

    /// The penalty rules of §7.8.3.1 scored on the finished symbols above give segno's totals (its `mask_scores`).
    /// One reading differs and is tested on its own below: after counting a 1:1:3:1:1 pattern segno resumes the
    /// search seven modules on, so in `10111011101` with four light modules at each end it counts the second,
    /// overlapping pattern not at all; every occurrence counts here. Automatic masks can then differ (rarely:
    /// once in 160 full symbols of every version and level tried), never the validity of the symbol.
    @Test func penaltyMatchesSegnosScores() throws {
        let cases: [(art: String, score: Int)] = [
            (QRCodeVectors.version1Masks[0], 1022), (QRCodeVectors.version5Medium, 1449),
            (QRCodeVectors.version7High, 2192), (QRCodeVectors.version10Low, 2641),
        ]
        for example in cases {
            let rows = Self.matrix(example.art)
            #expect(QRCode.penalty(rows.flatMap { $0 }, size: rows.count) == example.score)
        }
    }

    @Test func penaltyRules() {
        // All light, 21 × 21: N1 19 for each of 42 lines, N2 3 for each of 400 blocks, N4 10 × 10 for 0 % dark.
        #expect(QRCode.penalty([Bool](repeating: false, count: 441), size: 21) == 42 * 19 + 400 * 3 + 100)
        let line = { (text: String) in text.map { $0 == "#" } }
        #expect(QRCode.linePenalty(line("#####")) == 3)
        #expect(QRCode.linePenalty(line("#######.")) == 5)
        #expect(QRCode.linePenalty(line("....#.###.#....")) == 40)
        #expect(QRCode.linePenalty(line("#.###.#")) == 40)
        #expect(QRCode.linePenalty(line(".#.#.###.#.#.")) == 0)
        #expect(QRCode.linePenalty(line("....#.###.###.#....")) == 80)
    }

    // MARK: The standard's tables and worked values

    @Test func generatorPolynomialsMatchAnnexA() {
        let exponents = { (degree: Int) in ReedSolomon.generator(degree: degree).map { ReedSolomon.logarithms[Int($0)] }
        }
        #expect(exponents(7) == [0, 87, 229, 146, 149, 238, 102, 21])
        #expect(exponents(10) == [0, 251, 67, 46, 61, 118, 70, 64, 94, 32, 45])
    }

    /// Annex I's example, 01234567 in version 1-M, from its data codewords to its error correction codewords.
    @Test func errorCorrectionOfAnnexIExample() {
        let data: [UInt8] = [16, 32, 12, 86, 97, 128, 236, 17, 236, 17, 236, 17, 236, 17, 236, 17]
        let codewords = QRCode.finalMessage(data, 1, .medium)
        #expect(codewords == data + [165, 36, 212, 193, 237, 54, 199, 135, 44, 85])
    }

    @Test func dataCodewordsEndWithTerminatorAndAlternatePads() {
        let codewords = QRCode.dataCodewords(Array("linkout".utf8), version: 1, level: .medium)
        #expect(codewords == [64, 118, 198, 150, 230, 182, 247, 87, 64, 236, 17, 236, 17, 236, 17, 236])
    }

    /// Blocks of two lengths are interleaved column by column, the longer blocks' last codewords after the rest.
    @Test func blocksInterleave() {
        // Version 5-Q: two blocks of 15 data codewords, then two of 16, each with 18 error correction codewords.
        let data = (0..<62).map { UInt8($0) }
        let message = QRCode.finalMessage(data, 5, .quartile)
        #expect(message.count == 134)
        #expect(Array(message.prefix(8)) == [0, 15, 30, 46, 1, 16, 31, 47])
        #expect(Array(message[56..<62]) == [14, 29, 44, 60, 45, 61])
    }

    @Test func capacitiesMatchTables1And7() {
        let totals = [1: 26, 2: 44, 7: 196, 14: 581, 21: 1156, 25: 1588, 27: 1828, 40: 3706]
        for (version, total) in totals { #expect(QRCode.totalCodewords(version: version) == total) }
        let remainderBits = [1: 0, 2: 7, 7: 0, 14: 3, 21: 4, 28: 3, 40: 0]
        for (version, bits) in remainderBits { #expect(QRCode.dataModuleCount(version: version) % 8 == bits) }
        let bytes: [(version: Int, level: QRCode.ErrorCorrectionLevel, bytes: Int)] = [
            (1, .low, 17), (1, .medium, 14), (1, .quartile, 11), (1, .high, 7), (10, .medium, 213), (13, .medium, 331),
            (40, .low, 2953), (40, .medium, 2331), (40, .quartile, 1663), (40, .high, 1273),
        ]
        for example in bytes {
            #expect(QRCode.byteCapacity(version: example.version, level: example.level) == example.bytes)
        }
    }

    @Test func formatAndVersionInformationMatchAnnexesCAndD() {
        #expect(QRCode.formatInformation(level: .medium, mask: 0) == 0b101_0100_0001_0010)
        #expect(QRCode.formatInformation(level: .low, mask: 0) == 0b111_0111_1100_0100)
        #expect(QRCode.formatInformation(level: .high, mask: 7) == 0b000_1000_0011_1011)
        #expect(QRCode.versionInformation(7) == 0x07C94)
        #expect(QRCode.versionInformation(40) == 0x28C69)
    }

    // MARK: Structure

    @Test func finderTimingAndDarkModule() throws {
        for version in [1, 2, 7, 13, 40] {
            let code = try QRCode([], level: .low, version: version, mask: version % 8)
            let size = code.size
            #expect(code.modules.count == size && code.modules.allSatisfy { $0.count == size })
            for (top, left) in [(0, 0), (0, size - 7), (size - 7, 0)] {
                for dy in 0..<7 {
                    for dx in 0..<7 {
                        let ring = max(abs(dy - 3), abs(dx - 3))
                        #expect(code[top + dy, left + dx] == (ring != 2), "finder at \(top), \(left)")
                    }
                }
            }
            // Separators: the light row and column between each finder and the rest of the symbol.
            for index in 0..<8 {
                #expect(!code[7, index] && !code[index, 7])
                #expect(!code[7, size - 1 - index] && !code[index, size - 8])
                #expect(!code[size - 8, index] && !code[size - 1 - index, 7])
            }
            for index in 8..<(size - 8) {
                #expect(code[6, index] == (index % 2 == 0))
                #expect(code[index, 6] == (index % 2 == 0))
            }
            #expect(code[size - 8, 8])
        }
    }

    @Test func alignmentPatternsOfVersion7() throws {
        let code = try QRCode([], level: .medium, version: 7, mask: 3)
        let centres = [(6, 22), (22, 6), (22, 22), (22, 38), (38, 22), (38, 38)]
        for (row, column) in centres {
            for dy in -2...2 {
                for dx in -2...2 { #expect(code[row + dy, column + dx] == (max(abs(dy), abs(dx)) != 1)) }
            }
        }
    }

    @Test func formatInformationReadsBackAsLevelAndMask() throws {
        for version in [1, 7, 40] {
            for level in QRCode.ErrorCorrectionLevel.allCases {
                for mask in 0..<8 {
                    let code = try QRCode(Self.url(5), level: level, version: version, mask: mask)
                    let positions = Self.formatPositions(size: code.size)
                    let first = Self.read(code, positions.first)
                    #expect(Self.read(code, positions.second) == first)
                    let unmasked = first ^ 0b101_0100_0001_0010
                    #expect(Self.remainder(unmasked, dividedBy: 0b101_0011_0111) == 0)
                    #expect(unmasked >> 10 == level.formatBits << 3 | mask)
                }
            }
        }
        let bits: [QRCode.ErrorCorrectionLevel: Int] = [.low: 0b01, .medium: 0b00, .quartile: 0b11, .high: 0b10]
        for level in QRCode.ErrorCorrectionLevel.allCases { #expect(level.formatBits == bits[level]) }
    }

    @Test func versionInformationFromVersion7() throws {
        for version in 7...40 {
            let code = try QRCode([], level: .low, version: version, mask: 0)
            let positions = Self.versionPositions(size: code.size)
            let topRight = Self.read(code, positions.topRight)
            #expect(Self.read(code, positions.bottomLeft) == topRight)
            #expect(Self.remainder(topRight, dividedBy: 0b1_1111_0010_0101) == 0)
            #expect(topRight >> 12 == version)
        }
        // Below version 7 those modules belong to the encoding region: an empty version 6 symbol leaves them as the
        // mask and the pad codewords make them, not a version pattern.
        let six = try QRCode([], level: .low, version: 6, mask: 0)
        #expect(Self.read(six, Self.versionPositions(size: six.size).topRight) >> 12 != 6)
    }

    // MARK: Versions, levels and errors

    @Test func smallestVersionIsChosen() throws {
        let expected: [(bytes: Int, level: QRCode.ErrorCorrectionLevel, version: Int)] = [
            (0, .medium, 1), (14, .medium, 1), (15, .medium, 2), (66, .low, 4), (66, .medium, 5), (66, .quartile, 6),
            (66, .high, 8), (300, .low, 11), (300, .medium, 13), (300, .quartile, 16), (300, .high, 18),
            (2331, .medium, 40),
        ]
        for example in expected {
            let code = try QRCode(Self.url(example.bytes), level: example.level)
            #expect(code.version == example.version, "\(example.bytes) bytes at \(example.level)")
            #expect(code.level == example.level)
        }
        #expect(try QRCode("linkout").level == .medium)
    }

    @Test func refusesWhatCannotBeMade() {
        let tooMany = [UInt8](repeating: 0x61, count: 2332)
        #expect(throws: QRCodeError.tooLong(byteCount: 2332, capacity: 2331)) { try QRCode(tooMany, level: .medium) }
        #expect(throws: QRCodeError.tooLong(byteCount: 1274, capacity: 1273)) {
            try QRCode(Array(tooMany.prefix(1274)), level: .high)
        }
        #expect(throws: QRCodeError.tooLong(byteCount: 15, capacity: 14)) {
            try QRCode(Self.url(15), level: .medium, version: 1, mask: nil)
        }
        #expect(throws: QRCodeError.invalidVersion(41)) { try QRCode([], level: .medium, version: 41, mask: nil) }
        #expect(throws: QRCodeError.invalidVersion(0)) { try QRCode([], level: .medium, version: 0, mask: nil) }
        #expect(throws: QRCodeError.invalidMask(8)) { try QRCode([], level: .medium, version: nil, mask: 8) }
        #expect(QRCodeError.tooLong(byteCount: 2332, capacity: 2331).description.contains("2332 bytes"))
    }

    // MARK: SVG

    @Test func svgIsOnePathOverAWhiteSquare() throws {
        let code = try QRCode(Self.url(14), level: .medium, version: 1, mask: 0)
        let svg = code.svg(label: "Scan to open <the \"app\"> & pay")
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 29 29\""))
        #expect(svg.hasSuffix("</svg>"))
        #expect(svg.contains("width=\"116\" height=\"116\""))
        #expect(svg.contains("shape-rendering=\"crispEdges\""))
        #expect(svg.contains("role=\"img\""))
        #expect(svg.contains("aria-label=\"Scan to open &lt;the &quot;app&quot;&gt; &amp; pay\""))
        #expect(svg.contains("<title>Scan to open &lt;the &quot;app&quot;&gt; &amp; pay</title>"))
        #expect(!svg.contains("<the"))
        #expect(svg.contains("<rect width=\"29\" height=\"29\" fill=\"#fff\"/>"))
        #expect(svg.ranges(of: "<path").count == 1)
        #expect(svg.contains("<path fill=\"#000\" d=\""))
        #expect(!svg.contains("currentColor"))
        #expect(try QRCode(Self.url(300)).svg(label: "x").contains("viewBox=\"0 0 77 77\""))
    }

    /// The path's rectangles, drawn back into a grid, are exactly the dark modules inside a 4-module quiet zone.
    @Test func svgPathCoversExactlyTheDarkModules() throws {
        for code in [try QRCode(Self.url(66)), try QRCode(Self.url(300), level: .high)] {
            let extent = code.size + 8
            var grid = [[Bool]](repeating: [Bool](repeating: false, count: extent), count: extent)
            for command in code.pathData.split(separator: "z") {
                // M<x> <y>h<length>v1h-<length>
                let numbers = command.split(whereSeparator: { "Mhv ".contains($0) }).compactMap { Int($0) }
                try #require(numbers.count == 5 && numbers[3] == 1 && numbers[4] == -numbers[2], "\(command)")
                for column in numbers[0]..<(numbers[0] + numbers[2]) {
                    #expect(!grid[numbers[1]][column], "overlap at \(numbers[1]), \(column)")
                    grid[numbers[1]][column] = true
                }
            }
            for row in 0..<extent {
                for column in 0..<extent {
                    let inside = (4..<(code.size + 4)).contains(row) && (4..<(code.size + 4)).contains(column)
                    #expect(grid[row][column] == (inside && code[row - 4, column - 4]))
                }
            }
        }
    }
}

/// Symbols made by other encoders. segno 1.6.6 is the reference for full symbols; it writes eight zero bits after
/// a terminator that already ends on a codeword boundary (§7.4.10 asks for padding bits only when it does not),
/// which turns the first pad codeword of every byte-mode symbol that is not full into 00000000. So its symbols
/// here are full ones, where the terminator ends the data, and python-qrcode 8.2 made the padded one.
enum QRCodeVectors {
    /// The first 14 bytes of the example URL (a full version 1-M symbol) with each mask pattern 0...7 forced.
    static let version1Masks: [String] = [
        """
        #######..##...#######
        #.....#.##....#.....#
        #.###.#....##.#.###.#
        #.###.#..#..#.#.###.#
        #.###.#.#.#.#.#.###.#
        #.....#...##..#.....#
        #######.#.#.#.#######
        ..........##.........
        #.#.#.#....#....#..#.
        ....#..#..###.###...#
        ##.#####..####..#.###
        #..##..#.###....#..#.
        #....##.....#..#.#...
        ........###.#..##..##
        #######....####.#.###
        #.....#...#....##..##
        #.###.#.####.#...#.#.
        #.###.#..#.####.##.#.
        #.###.#.#..##.#.#.#.#
        #.....#..#......#..#.
        #######.##..#...##.##
        """,
        """
        #######.#.##..#######
        #.....#....#..#.....#
        #.###.#.##..#.#.###.#
        #.###.#....##.#.###.#
        #.###.#..####.#.###.#
        #.....#.###...#.....#
        #######.#.#.#.#######
        .........##..........
        #.#...##.#.....#..#.#
        .#.###...##.###.##.##
        #...#.#..##.#..####.#
        ##..##....#..#.###...
        ##.#..##.#.###.....#.
        ........#.####..##..#
        #######.##..#.#####.#
        #.....#..###.#..##..#
        #.###.#...#....#.....
        #.###.#.....#.###....
        #.###.#.##..#########
        #.....#....#.#.###...
        #######.#..###.##...#
        """,
        """
        #######.......#######
        #.....#..#.##.#.....#
        #.###.#.#####.#.###.#
        #.###.#.##.#..#.###.#
        #.###.#.##..#.#.###.#
        #.....#.#.#.#.#.....#
        #######.#.#.#.#######
        ........#.#.#........
        #.#####..###..#####..
        ##..##....#..########
        ###..#####.#####..##.
        .#.###...##.##..###..
        #.#####.###.#.#.##..#
        ........####.#.####.#
        #######..#####.#..##.
        #.....#.#.####.####.#
        #.###.#.#..#.#####.##
        #.###.#.##....#.#.#..
        #.###.#.#####..#..#..
        #.....#..#.###..###..
        #######.#.#.#.##.#.#.
        """,
        """
        #######.#.....#######
        #.....#.#.....#.....#
        #.###.#....#..#.###.#
        #.###.#.##.#..#.###.#
        #.###.#....#..#.###.#
        #.....#..#....#.....#
        #######.#.#.#.#######
        ........####.........
        #.##.###...##.#..#.##
        ##..##....#..########
        .#.#..##.....#...#.##
        #....#.#.......#.#.#.
        #.#####.###.#.#.##..#
        ........#.#.###.#....
        #######.#..#....#....
        #.....#.#.####.####.#
        #.###.#..#..##..#.##.
        #.###.#.#.#.####...#.
        #.###.#.#####..#..#..
        #.....#......####...#
        #######.##...##.###..
        """,
        """
        #######.##....#######
        #.....#....##.#.....#
        #.###.#..#....#.###.#
        #.###.#.###.#.#.###.#
        #.###.#.#...#.#.###.#
        #.....#.###.#.#.....#
        #######.#.#.#.#######
        ........#..#.........
        #...#.###.##.#####..#
        #.####.####.....###..
        .##.#.#####..#####.#.
        ##.#.....#.#.#.......
        ##..####..#.##.###.#.
        ........#.##..#.####.
        #######.##...#.###.#.
        #.....#......#.#....#
        #.###.#.##.#....##...
        #.###.#......#.##.###
        #.###.#..#.....###...
        #.....#..##..#.......
        #######.###.##...#..#
        """,
        """
        #######...##..#######
        #.....#.#..##.#.....#
        #.###.#.#####.#.###.#
        #.###.#.#.##..#.###.#
        #.###.#..#..#.#.###.#
        #.....#..##.#.#.....#
        #######.#.#.#.#######
        ........###.#........
        #.....#.####.##..###.
        ####.#..##...#...###.
        ###..#####.#####..##.
        .#..##....#.##.####..
        ##.#..##.#.###.....#.
        ........#.##.#..###.#
        #######..#####.#..##.
        #.....#..#.####..##..
        #.###.#....#.#####.##
        #.###.#.......###.#..
        #.###.#..#..#########
        #.....#....###.####..
        #######.#.#.#.##.#.#.
        """,
        """
        #######.#.##..#######
        #.....#.#..##.#.....#
        #.###.#.##.##.#.###.#
        #.###.#...##..#.###.#
        #.###.#.##.##.#.###.#
        #.....#..#.##.#.....#
        #######.#.#.#.#######
        .........##.#........
        #..#######.#.#..#.###
        ####.#..##...#...###.
        ##....##.#..##.#.####
        .#.........###.#..#..
        ##.#..##.#.###.....#.
        ........#.##..#.####.
        #######.##.##..##.#..
        #.....#.##.####..##..
        #.###.#.#....#.##..#.
        #.###.#.#.##..##.##..
        #.###.#..#..#########
        #.....#....##.#######
        #######.#...######...
        """,
        """
        #######..##...#######
        #.....#..##...#.....#
        #.###.#.....#.#.###.#
        #.###.#..#..#.#.###.#
        #.###.#.....#.#.###.#
        #.....#.#.#...#.....#
        #######.#.#.#.#######
        ...........#.........
        #..#.##.#....#.#.....
        ....#..#..###.###...#
        #..#.##....##.....#.#
        #.####.####...#.##.##
        #....##.....#..#.#...
        ........##..##.#....#
        #######.....##..####.
        #.....#.#.#....##..##
        #.###.#..#.#....##...
        #.###.#.##..##..#..##
        #.###.#....##.#.#.#.#
        #.....#..##..#.......
        #######.##.##.#.#..#.
        """,
    ]
    /// 84 bytes, a full version 5-M symbol (two blocks, one alignment pattern); mask 2 chosen.
    static let version5Medium = """
        #######....#.#..#.###..#.##...#######
        #.....#..##.##..#.....#..####.#.....#
        #.###.#.#...#..##.#####.......#.###.#
        #.###.#.##.####..#.#..#..###..#.###.#
        #.###.#.##....#.######.##.....#.###.#
        #.....#.#.#..#####..#.#.#.###.#.....#
        #######.#.#.#.#.#.#.#.#.#.#.#.#######
        ........#.##...#...#.#.#...##........
        #.#####....#.#.#.#....####.##.#####..
        #...##.###.#####...###.#..#..#.#..##.
        .##..##.#...####....#...##.#.###..###
        ##..##.#.#.#..#.#...###...#..###....#
        ..##..#.#..##.##.#.#..#.####.##.#.###
        ##.#.#...##..#..#.####.#....##.#.....
        ..#.#.#.#...#.###.#...#...##.#####.##
        ##.#...#.#.##.....##.##...###..##....
        ..######.#..##..##....#.##..#####.##.
        ..##......#####.#..##..#.##..#.#.#.#.
        ##..#.#.#..##.####....#..###.....#.##
        .#####....####.##.#.#####.#...##....#
        .###.##.#..##.##.#.#..#.###..##.#.#..
        .#.#.#..#.###.#.#.###..#....#....#...
        .#....###.#.####..#.##..####.#####.##
        #..##...#.#.#.#......#..#..#.#.##..##
        #..#.##.#.#..##.##....#.##.######.##.
        ######.#..#..##.#..###.#.##.##.#.#...
        #.#..###..####.#.#..###.#.###.###..##
        #.......#..##..##..#.#.##.##.##.....#
        #.#.######..#.##.#.#..#..#..#####.###
        ........##..#.#.#.###..#....#...##...
        #######...##.######.##...##.#.#.#.###
        #.....#.#......#..#.####..#.#...##..#
        #.###.#.#.#..#..##.#..###########.##.
        #.###.#.#######.##.###.#.#...##.##.##
        #.###.#.###....##.#..##..##.#....####
        #.....#..####.....##.##.#.#.#...#...#
        #######.#.#.##.#.#.##...###...#.#.###
        """
    /// 64 bytes, a full version 7-H symbol (version information, blocks of 13 and 14 data codewords); mask 7 chosen.
    static let version7High = """
        #######.##....#########..##.######..#.#######
        #.....#.####.#.#..#.#....##..##....#..#.....#
        #.###.#.....####.#..##.#.#.#....#..#..#.###.#
        #.###.#.#....##.##..###...##.##..#.##.#.###.#
        #.###.#.#.##.####..######...#.#..####.#.###.#
        #.....#.##.##.#...###...###.###.#.....#.....#
        #######.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#######
        .........#..#.#.##..#...####...##..#.........
        ...#..#...##...#..#.#####.##...#.#.....###.##
        ..##.....##....#.#.##..##..##...##.........##
        ..##.#######....#..#..##.###...##.##....#...#
        .##.##.##.##..######.##.##.#.#.#..########..#
        ##.#.####.#.##...#.#.#..##.#..####....####...
        ...#.#.....#.#.####.#....###....#.#..#.####.#
        ###...##.#.#.#.#...#.##.....#..#...#.###.###.
        ##..#...###.##..#..###...###.#.###.#.#..#...#
        .##.#.#..#..##..#.#..#..#....##.###......#.##
        ##..##...#.####.#.#.#........#..#.....#..###.
        .....###...#.#..##.####.#.##...##..##..##.###
        .###.#..####.#.#.#####.#.##.##..###.####.....
        ..#######.##...##.#######..#.#.#..########...
        ....#...#.#..#.....##...####.#.#....#...#.###
        #...#.#.#.##..#...###.#.#.##..##.##.#.#.##..#
        .##.#...#...#...#..##...#.##..#.....#...##.##
        ###.#####.#...##.#.#######.####.#.#.#####...#
        #....#....##.....####.##...#..#.###..#..#####
        #..#.###..###.####..#.##..###..#.#...#...#.#.
        ....#..##.#.###.......#...##.#..#.#..##.#....
        ##....##....#...#.##...#####..#.###.#..##...#
        ..####.#...#..#...###..###...###...#..#..#.#.
        ......#..##.#.#####.#.####.#....#...###.##.##
        .##....##.#####..##..#.####.##..#...#.#.#....
        .#.##.####..#....####.#.##..##.#.#.##.##....#
        ##..#....###.#..#...#.#..#.#.##.....###....##
        ....#.###.##.......###.#.#.####.#######...#.#
        .####....###...####.#...###.#..#...##..###...
        #..##.###.##.###..#.#####..######.#.######.#.
        ........#####.#.#..##...###.#.....#.#...#..##
        #######.....#.....#.#.#.#.####.....##.#.#.##.
        #.....#....#.#....###...#..##...##.##...##...
        #.###.#..##.....#############...##..#####....
        #.###.#.#.#.#####..##....##.##..#...######.##
        #.###.#..#..##...#..###.###..#####.###.##.###
        #.....#..###.##.###########.##.##.#.#........
        #######..#.##....#..##...###.##..##..##..#.#.
        """
    /// 271 bytes, a full version 10-L symbol (16-bit count, blocks of 68 and 69 data codewords); mask 2 chosen.
    static let version10Low = """
        #######...#.#.#..#....####.#####.......####..###..#######
        #.....#.##..##..###########....########..#..#..#..#.....#
        #.###.#..#...###.#.....##...#.#.###....##.#.####..#.###.#
        #.###.#.#.####..###.#.....#..###.######..#.#...#..#.###.#
        #.###.#...#.#.#....#..###.######.....#..#.###..#..#.###.#
        #.....#.####..#.###....##.#...#.###.#.#.##.##.#...#.....#
        #######.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#######
        ............###.#.#.##..###...###.#...###.#.#####........
        #####.###.#.##.####.##.#.#######..###....###.###.#.#.#.#.
        .#..#..#...##.#....#..#.########.....#..######.###.#...##
        .#.#..##.##.#..##..###.#.###.#.#..##..#....#..###.#.#.##.
        #..#.#.####....####..##.##.#######.....###.##.#.#..######
        #######...####.######..#.##....#..#####..##........#.#.##
        #####..#...####......####..####....###.##.#.#..###.####.#
        #..#..#.#....######.#...###.##...##...##......########.#.
        .#.#...#..........##.##..#..#...#....#..#..###..##..###.#
        #.#.#######.##.##.###..#.###...#..######.###.###.#......#
        .##..#..####..#..#....####.####....###...####..###.#....#
        .#.#..##.......##.#.###.#####..######.#..#.#..#####..#.#.
        .###.#.#.##.##.#.##..#####..##..###..#..###.#....##.###.#
        ####.###.#.##..####.##...##....#..###..#..##.###.##....#.
        ####.#.....##......#..###....##....###.##.###..##...#.#.#
        #.#####.#.#..#.######..#.##.....###.#.#.##....#.#.#.#.##.
        #....#.#..#...#.####...##...#.####....###.####.##########
        #..#.##.....#..####.##.#.##....#.#.###.......###.#...#.##
        #.#..#..#.#.##.....#..#.#....##....###.####.##.###..###.#
        ###.######..#.#.....##....######..##..#....#..#.#####.##.
        ...##...##.##..##.....#.#.#...###....#####.###..#...###.#
        ..#.#.#.#.####.######..#..#.#.##.#.####..#...#..#.#.##.##
        #...#...##...........######...###...##...##.#...#...#...#
        .#.########.#.#..###...#.##########...##....###.#####.##.
        .#.#.#.....#.....###..###.##.#..###.....#..###.#..######.
        ##....#..#.#..###.###..#..######.#.###.#...#..#.#...#...#
        .####..#.####.#..#....###....#.##...##.#..#.#...##.#.#..#
        ##.####.......#...#.##.#.##..##.#####.#..#.#..##.#..#.##.
        ###.##.#.....#.#....###.###.##..#.#..#.####.#..#.###.###.
        #....###.#..##.####.##.#....#..#.#.###...###..#.##..#..#.
        ..#.##.#.#.#.#.....#..#.#....#.##..###....#.#...#.#...#..
        ###..####.##.....##.#....##..###.###..#..#.##.##.#..###..
        #.#.#..###.#....#..#.####.###..###....###.####.#.###.###.
        ####.##.#..#...####.##.#..#.##.#...##.#..#....#..#####...
        ##..##....#.#......#..#.#....#.##...##...###.#.####..##.#
        ....######.#.#.#...#.....#.#.##...##..#....#..#..#.##.##.
        ..##.#..##.#...###...#....#..#..#....#.###.##.##..#.####.
        .########.#.#.#######..#....#.##...##....#.#.#...#####.##
        #....#..#.##.##......####.#..#..#..#.#..####...#..#.....#
        #.#..####.#....#.##..##..###.########.#..#..####.#.#####.
        #####...#.####.....#.#.##.##.#..###.....#.###..#..#####..
        ......#..##..####.###..#.#######...##.##...#.#..#####...#
        ........##..#.#..#.#..###.#...#.#..#.#..#.##...##...##..#
        #######.#.#..##.#.##.#...##.#.#.###.#.##.#.#..#.#.#.####.
        #.....#..#..#....#..#.#.#.#...#.#.##.#.####.#####...###..
        #.###.#.#####..####.##.#.#######....#.#......#..#####..#.
        #.###.#.#.#.#......#..#.#####...#..###.#..##...#....#.#..
        #.###.#.##.###.#.###...##.#...##.####.##.#.#..###.#......
        #.....#.##.#.#..##.#..####.#.#####....#######..#.#.#.##..
        #######.######.####.#..#.#..##.#.######...#..#.#####.#.#.
        """
    /// The 66-byte example URL at level M, version 5, mask 7, made by python-qrcode: it needs pad codewords.
    static let exampleURLMedium = """
        #######..#.##...#...###..#.##.#######
        #.....#..#....#..##.#....###..#.....#
        #.###.#..###....###........##.#.###.#
        #.###.#..###....#.##..#.#.##..#.###.#
        #.###.#......######....#####..#.###.#
        #.....#.#######.####.#...#.##.#.....#
        #######.#.#.#.#.#.#.#.#.#.#.#.#######
        ............#..##..#.#..#..#.........
        #..#.##.#...##...#....#.##...#.#.....
        #.#.#..##.#..###.#.#####.##...#...#.#
        #..#..#..##...#.#...##..#.#..##.#####
        #####...#..#...#..#..##.##...#..#....
        ..#..##..##..#..##.###..##..###..#.##
        ..#.#..#..#......#.##.#.#.....##..###
        ###...#####..##..##..#.#..#.#.###.#.#
        #...##.##.#..#...##....########.#..##
        .##...##..#.#.##..##..#.#.#####..###.
        ...##...##.#.#.##.###..##....##.##.##
        #.#.###.#....#####...#...#..#...#.###
        .....#..#..#..#..#...#....#.##.#..##.
        .....##..##.#..##....#.######.#.##.#.
        ...#...#.#....#.#...##..##..####.#.##
        .#.#.####....#...#.#....#....##....##
        #...##.#.###..#..#.####..###.##....#.
        .##...#.#.#.####....#.#.###..###.#.#.
        ..#.#..###..#..###..##..###...##.####
        #..##.##.####.#....#...##.#..######.#
        .#...#.##..#.#.#.##.##...###...#...##
        ##....###..#.##..#..###...#########.#
        ........##....#.#......####.#...##..#
        #######......##...#..#...#.##.#.##.##
        #.....#.#.#.#..####.#.#.#.#.#...####.
        #.###.#..###...######...###.######...
        #.###.#.#..##..##.##.#..#......###.#.
        #.###.#..##..###..##..#....##..##.###
        #.....#...##....#..####..#..#.##.....
        #######.##.##..###...##.##.##.#..#.##
        """
}
