/// RFC 8259's grammar, checked over UTF-8 bytes before Foundation reads them. Foundation's reader is laxer than
/// the RFC: it takes a comma before a closing bracket, a control character in a string, an escape it does not know
/// (`\x41`, `\u+041`) in a member it skips, so a body another reader (a proxy, a log, the next release) refuses
/// would count here. Every JSON text linkout takes from outside (a token, an API body, a line item file) is
/// checked with it. Bytes are taken as UTF-8 already (`TokenDecoder.utf8JSONText`).
public enum JSONGrammar {
    /// Containers nested deeper than this are refused: no text linkout takes nests past a few levels.
    public static let maxDepth = 512

    /// What a text it refuses may hold that Foundation's reader took, for the refusal's message.
    public static let laxnesses =
        "a comma before a closing bracket, a control character or an unknown escape in a string"

    /// Whether `text` is exactly one JSON value, with optional whitespace around it.
    public static func accepts(_ text: some Collection<UInt8>) -> Bool {
        var reader = Reader(bytes: Array(text))
        return reader.document()
    }

    /// A forward walk that keeps the open containers on a stack of its own (no recursion, whatever the depth).
    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        init(bytes: [UInt8]) {
            self.bytes = bytes
        }

        private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        private mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        private mutating func take(_ byte: UInt8) -> Bool {
            guard current == byte else { return false }
            index += 1
            return true
        }

        /// One value, then nothing but whitespace.
        mutating func document() -> Bool {
            // Each open container: true for an object (whose members are a key, a colon, then a value).
            var open: [Bool] = []
            skipWhitespace()
            while true {
                // A value is expected here.
                if take(UInt8(ascii: "{")) || take(UInt8(ascii: "[")) {
                    let isObject = bytes[index - 1] == UInt8(ascii: "{")
                    guard open.count < JSONGrammar.maxDepth else { return false }
                    open.append(isObject)
                    skipWhitespace()
                    if take(isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        open.removeLast()
                    } else {
                        if isObject { guard member() else { return false } }
                        continue
                    }
                } else {
                    guard scalar() else { return false }
                }
                // After a value: a comma and the next one, or the end of its container.
                while true {
                    skipWhitespace()
                    guard let isObject = open.last else { return index == bytes.count }
                    if take(UInt8(ascii: ",")) {
                        skipWhitespace()
                        if isObject { guard member() else { return false } }
                        break
                    }
                    guard take(isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) else { return false }
                    open.removeLast()
                }
            }
        }

        /// An object member's key and colon, leaving the cursor at its value.
        private mutating func member() -> Bool {
            guard current == UInt8(ascii: "\""), string() else { return false }
            skipWhitespace()
            guard take(UInt8(ascii: ":")) else { return false }
            skipWhitespace()
            return true
        }

        /// A string, number or literal.
        private mutating func scalar() -> Bool {
            switch current {
            case UInt8(ascii: "\""): string()
            case UInt8(ascii: "t"): literal("true")
            case UInt8(ascii: "f"): literal("false")
            case UInt8(ascii: "n"): literal("null")
            default: number()
            }
        }

        private mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard bytes.count - index >= count else { return false }
            let matches = word.withUTF8Buffer { expected in bytes[index..<(index + count)].elementsEqual(expected) }
            index += count
            return matches
        }

        /// `"…"`: no control character unescaped, and only the RFC's escapes (§7).
        private mutating func string() -> Bool {
            guard take(UInt8(ascii: "\"")) else { return false }
            while let byte = current {
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return true
                case UInt8(ascii: "\\"):
                    guard let escaped = current else { return false }
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                        UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        continue
                    case UInt8(ascii: "u"):
                        guard bytes.count - index >= 4, bytes[index..<(index + 4)].allSatisfy(Self.isHexDigit)
                        else { return false }
                        index += 4
                    default:
                        return false
                    }
                case 0x00..<0x20:
                    return false
                default:
                    continue
                }
            }
            return false
        }

        /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` (§6).
        private mutating func number() -> Bool {
            _ = take(UInt8(ascii: "-"))
            if take(UInt8(ascii: "0")) {
                // A leading zero stands alone.
            } else {
                guard digits() else { return false }
            }
            if take(UInt8(ascii: ".")) { guard digits() else { return false } }
            if take(UInt8(ascii: "e")) || take(UInt8(ascii: "E")) {
                _ = take(UInt8(ascii: "+")) || take(UInt8(ascii: "-"))
                guard digits() else { return false }
            }
            return true
        }

        /// One or more decimal digits.
        private mutating func digits() -> Bool {
            let start = index
            while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { index += 1 }
            return index > start
        }

        private static func isHexDigit(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
        }
    }
}
