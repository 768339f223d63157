import Domain

extension TokenDecoder {
    /// The token in `json` when it has the plain shape every token StoreKit issues has: one flat object whose
    /// keys are distinct and whose values are ASCII strings without escapes or integers of at most 18 digits,
    /// with the four required fields present and every known field of its right type. Anything else (escapes,
    /// fractions, nesting, `null`, a repeated key, a missing field) gives nil, and `decode` takes the general
    /// path through JSONDecoder and the duplicate-key scan, which names the problem.
    ///
    /// On its subset this reads exactly what JSONDecoder reads, in one pass and without Foundation: JSONDecoder
    /// and the duplicate scan cost more CPU than all the rest of a landing visit together.
    static func decodePlain(_ json: [UInt8]) -> ExternalPurchaseToken? {
        var reader = PlainReader(bytes: json)
        var appAppleId: Int64?
        var bundleId: BundleID?
        var tokenCreationDate: Int64?
        var externalPurchaseId: ExternalPurchaseID?
        var tokenType: String?
        var tokenExpirationDate: Int64?
        // Keys seen so far, as byte ranges: tokens have a handful, so a linear scan beats hashing.
        var seen: [Range<Int>] = []
        reader.skipWhitespace()
        guard reader.take(UInt8(ascii: "{")) else { return nil }
        reader.skipWhitespace()
        if !reader.take(UInt8(ascii: "}")) {
            while true {
                reader.skipWhitespace()
                guard let key = reader.plainString() else { return nil }
                for earlier in seen where earlier.count == key.count && json[earlier].elementsEqual(json[key]) {
                    return nil
                }
                seen.append(key)
                reader.skipWhitespace()
                guard reader.take(UInt8(ascii: ":")) else { return nil }
                reader.skipWhitespace()
                let value: PlainValue
                if let range = reader.plainString() {
                    value = .string(String(decoding: json[range], as: UTF8.self))
                } else if let integer = reader.plainInteger() {
                    value = .integer(integer)
                } else {
                    return nil
                }
                switch (Self.field(json[key]), value) {
                case (.appAppleId, .integer(let integer)): appAppleId = integer
                case (.bundleId, .string(let string)): bundleId = BundleID(string)
                case (.tokenCreationDate, .integer(let integer)): tokenCreationDate = integer
                case (.externalPurchaseId, .string(let string)): externalPurchaseId = ExternalPurchaseID(string)
                case (.tokenType, .string(let string)): tokenType = string
                case (.tokenExpirationDate, .integer(let integer)): tokenExpirationDate = integer
                case (nil, _): break  // unknown keys are ignored, as JSONDecoder ignores them
                default: return nil  // a known field of the wrong type: the general path names it
                }
                reader.skipWhitespace()
                if reader.take(UInt8(ascii: ",")) { continue }
                guard reader.take(UInt8(ascii: "}")) else { return nil }
                break
            }
        }
        reader.skipWhitespace()
        guard reader.atEnd, let appAppleId, let bundleId, let tokenCreationDate, let externalPurchaseId else {
            return nil
        }
        return ExternalPurchaseToken(
            appAppleId: appAppleId,
            bundleId: bundleId,
            tokenCreationDate: tokenCreationDate,
            externalPurchaseId: externalPurchaseId,
            tokenType: tokenType,
            tokenExpirationDate: tokenExpirationDate
        )
    }

    private enum PlainField {
        case appAppleId, bundleId, tokenCreationDate, externalPurchaseId, tokenType, tokenExpirationDate
    }

    private enum PlainValue {
        case string(String)
        case integer(Int64)
    }

    /// The known fields' names all differ in length, so the length picks the one name to compare.
    private static func field(_ key: ArraySlice<UInt8>) -> PlainField? {
        let known: (field: PlainField, name: String)
        switch key.count {
        case 10: known = (.appAppleId, "appAppleId")
        case 8: known = (.bundleId, "bundleId")
        case 17: known = (.tokenCreationDate, "tokenCreationDate")
        case 18: known = (.externalPurchaseId, "externalPurchaseId")
        case 9: known = (.tokenType, "tokenType")
        case 19: known = (.tokenExpirationDate, "tokenExpirationDate")
        default: return nil
        }
        return key.elementsEqual(known.name.utf8) ? known.field : nil
    }
}

/// A forward-only reader for the plain subset of JSON that `decodePlain` accepts.
private struct PlainReader {
    let bytes: [UInt8]
    var index = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    var atEnd: Bool { index == bytes.count }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func take(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// The range of a string's contents when it is printable ASCII without escapes; nil (cursor unmoved)
    /// otherwise.
    mutating func plainString() -> Range<Int>? {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        var end = index + 1
        while end < bytes.count {
            switch bytes[end] {
            case UInt8(ascii: "\""):
                let range = (index + 1)..<end
                index = end + 1
                return range
            case UInt8(ascii: "\\"), 0x00..<0x20, 0x7F...0xFF: return nil
            default: end += 1
            }
        }
        return nil
    }

    /// An integer in JSON's grammar (`-?(0|[1-9][0-9]*)`) of at most 18 digits, so it cannot overflow, and not
    /// followed by a fraction or exponent; nil (cursor unmoved) otherwise.
    mutating func plainInteger() -> Int64? {
        var position = index
        let negative = position < bytes.count && bytes[position] == UInt8(ascii: "-")
        if negative { position += 1 }
        let first = position
        var value: Int64 = 0
        while position < bytes.count, bytes[position] >= UInt8(ascii: "0"), bytes[position] <= UInt8(ascii: "9") {
            // The 19th digit is refused before it is multiplied in: 18 digits times ten can overflow.
            if position - first == 18 { return nil }
            value = value * 10 + Int64(bytes[position] - UInt8(ascii: "0"))
            position += 1
        }
        let digits = position - first
        guard digits > 0, digits == 1 || bytes[first] != UInt8(ascii: "0") else { return nil }
        if position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return nil
            default: break
            }
        }
        index = position
        return negative ? -value : value
    }
}
