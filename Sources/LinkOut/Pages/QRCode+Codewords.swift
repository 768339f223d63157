// MARK: - Data and error correction codewords (ISO/IEC 18004:2015 §7.4, §7.5, §7.6)

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
