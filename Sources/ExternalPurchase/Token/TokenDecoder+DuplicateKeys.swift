extension TokenDecoder {
    /// The first top-level key that occurs twice in `json`, compared after unescaping (`"bundle\u0049d"` is
    /// `bundleId`), or nil. JSONDecoder keeps one of the two values silently, and which one differs between
    /// readers, so a token with a repeated field could mean one thing here and another to the next reader.
    /// Only the top level is scanned: every field a token carries lives there. Malformed JSON returns nil;
    /// `JSONGrammar` refuses it. The JSON APIs scan their request bodies with it too, for the same reason.
    public static func duplicateTopLevelKey(in json: [UInt8]) -> String? {
        var scanner = KeyScanner(bytes: json)
        var seen = Set<String>()
        scanner.skipWhitespace()
        guard scanner.take(UInt8(ascii: "{")) else { return nil }
        scanner.skipWhitespace()
        if scanner.take(UInt8(ascii: "}")) { return nil }
        while true {
            scanner.skipWhitespace()
            guard let key = scanner.string() else { return nil }
            // Swift's String equality is the one JSONDecoder's key lookup uses, so "equal" means the same here.
            guard seen.insert(key).inserted else { return key }
            scanner.skipWhitespace()
            guard scanner.take(UInt8(ascii: ":")), scanner.skipValue() else { return nil }
            scanner.skipWhitespace()
            if scanner.take(UInt8(ascii: ",")) { continue }
            return nil
        }
    }
}

extension TokenDecoder {
    /// The first key that occurs twice in any object of `json`, at any depth (a line item inside a list names a
    /// field twice), or nil. Objects as deep as `JSONGrammar` takes are looked into (it refuses deeper ones and what
    /// is malformed).
    public static func duplicateKeyAnywhere(in json: [UInt8], maxDepth: Int = JSONGrammar.maxDepth) -> String? {
        var scanner = KeyScanner(bytes: json)
        return scanner.duplicateKey(depth: maxDepth)
    }
}

extension KeyScanner {
    /// Walks one value; the first repeated key of an object in it, or nil.
    fileprivate mutating func duplicateKey(depth: Int) -> String? {
        skipWhitespace()
        guard depth > 0, index < bytes.count else {
            _ = skipValue()
            return nil
        }
        if take(UInt8(ascii: "{")) {
            var seen = Set<String>()
            skipWhitespace()
            if take(UInt8(ascii: "}")) { return nil }
            while true {
                skipWhitespace()
                guard let key = string() else { return nil }
                guard seen.insert(key).inserted else { return key }
                skipWhitespace()
                guard take(UInt8(ascii: ":")) else { return nil }
                if let repeated = duplicateKey(depth: depth - 1) { return repeated }
                skipWhitespace()
                if take(UInt8(ascii: ",")) { continue }
                // The closing brace is taken too, so the walk goes on after this object (a second line item,
                // the next section of a file).
                _ = take(UInt8(ascii: "}"))
                return nil
            }
        }
        if take(UInt8(ascii: "[")) {
            skipWhitespace()
            if take(UInt8(ascii: "]")) { return nil }
            while true {
                if let repeated = duplicateKey(depth: depth - 1) { return repeated }
                skipWhitespace()
                if take(UInt8(ascii: ",")) { continue }
                _ = take(UInt8(ascii: "]"))
                return nil
            }
        }
        _ = skipValue()
        return nil
    }
}

/// A forward-only reader over JSON bytes that knows just enough to walk the top level of an object.
private struct KeyScanner {
    let bytes: [UInt8]
    var index = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    mutating func skipWhitespace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    mutating func take(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// A string at the cursor, unescaped; nil when there is none or it is malformed.
    mutating func string() -> String? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        var units: [UInt16] = []
        var run: [UInt8] = []
        func flush() {
            units.append(contentsOf: String(decoding: run, as: UTF8.self).utf16)
            run.removeAll()
        }
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                flush()
                return String(decoding: units, as: UTF16.self)
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { return nil }
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): run.append(escaped)
                case UInt8(ascii: "b"): run.append(0x08)
                case UInt8(ascii: "f"): run.append(0x0C)
                case UInt8(ascii: "n"): run.append(0x0A)
                case UInt8(ascii: "r"): run.append(0x0D)
                case UInt8(ascii: "t"): run.append(0x09)
                case UInt8(ascii: "u"):
                    // A UTF-16 code unit; surrogate pairs arrive as two escapes and join in the final decode.
                    guard index + 4 <= bytes.count,
                        let unit = UInt16(String(decoding: bytes[index..<(index + 4)], as: UTF8.self), radix: 16)
                    else { return nil }
                    index += 4
                    flush()
                    units.append(unit)
                default: return nil
                }
            default:
                run.append(byte)
            }
        }
        return nil
    }

    /// Moves past one value of any kind; false when the input ends first.
    mutating func skipValue() -> Bool {
        skipWhitespace()
        guard index < bytes.count else { return false }
        switch bytes[index] {
        case UInt8(ascii: "\""):
            return string() != nil
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    guard string() != nil else { return false }
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 {
                        index += 1
                        return true
                    }
                default:
                    break
                }
                index += 1
            }
            return false
        default:
            // A number, true, false or null: up to the next delimiter.
            while index < bytes.count,
                ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D].contains(
                    bytes[index]
                )
            {
                index += 1
            }
            return true
        }
    }
}
