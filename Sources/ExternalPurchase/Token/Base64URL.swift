/// Base64URL (RFC 4648 §5) in one pass over bytes, tolerant the way tokens arrive in the wild: either alphabet,
/// with or without `=` padding. Apple's own example tokens mix unpadded, `=` and `==` forms.
public enum Base64URL {
    /// Decodes; nil when a byte is outside both alphabets, padding is misplaced, or the length is impossible.
    public static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        if let decoded = text.withContiguousStorageIfAvailable({ decode(bytes: $0) }) { return decoded }
        return Array(text).withUnsafeBufferPointer { decode(bytes: $0) }
    }

    /// One pass over contiguous bytes, writing straight into the output (every landing decodes a token, and
    /// the appends and optional table entries of a general loop cost as much as the rest of its decoding).
    private static func decode(bytes text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var valid = true
        var count = 0
        var padding = 0
        let output = [UInt8](unsafeUninitializedCapacity: text.count * 3 / 4 + 1) { output, written in
            decodeTable.withUnsafeBufferPointer { table in
                var accumulator: UInt32 = 0
                var bits = 0
                for byte in text {
                    if byte == UInt8(ascii: "=") {
                        padding += 1
                        continue
                    }
                    let value = table[Int(byte)]
                    guard padding == 0, value != invalid else {
                        valid = false
                        return
                    }
                    accumulator = accumulator << 6 | UInt32(value)
                    bits += 6
                    count += 1
                    if bits >= 8 {
                        bits -= 8
                        output[written] = UInt8(truncatingIfNeeded: accumulator >> UInt32(bits))
                        written += 1
                    }
                }
            }
        }
        // A lone trailing character carries fewer than 8 bits: no valid encoding ends that way.
        guard valid, count % 4 != 1, padding <= 2, padding == 0 || (count + padding) % 4 == 0 else { return nil }
        return output
    }

    /// Encodes with the URL-safe alphabet and no padding.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var output: [UInt8] = []
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in bytes {
            accumulator = accumulator << 8 | UInt32(byte)
            bits += 8
            while bits >= 6 {
                bits -= 6
                output.append(alphabet[Int(accumulator >> UInt32(bits) & 0x3F)])
            }
        }
        if bits > 0 {
            output.append(alphabet[Int(accumulator << UInt32(6 - bits) & 0x3F)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Both alphabets: `+`/`-` are 62, `/`/`_` are 63; `invalid` for every other byte.
    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: invalid, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        table[Int(UInt8(ascii: "+"))] = 62
        table[Int(UInt8(ascii: "/"))] = 63
        return table
    }()

    private static let invalid: UInt8 = 0xFF
}
