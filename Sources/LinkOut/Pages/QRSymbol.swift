/// The symbol while it is built: modules row after row, and which of them are function patterns or reserved for
/// format and version information (everything outside the encoding region, ISO/IEC 18004:2015 §6.3.7).
struct QRSymbol {
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
