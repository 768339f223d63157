/// Percent-decoding for URL paths and `application/x-www-form-urlencoded` queries, on bytes in one pass.
public enum FormDecoding {
    /// Splits a query on `&` and `=`, then decodes names and values (`+` becomes a space).
    public static func items(_ query: Substring) -> [(name: String, value: String)] {
        guard !query.isEmpty else { return [] }
        var query = query
        // Over the contiguous bytes: every landing visit decodes its query, and walking a Substring's UTF-8 view
        // index by index (plus the split's array of slices) cost more than the rest of the parsing.
        return query.withUTF8 { bytes in
            var items: [(name: String, value: String)] = []
            var start = 0
            while start < bytes.count {
                var end = start
                var equals: Int?
                while end < bytes.count, bytes[end] != UInt8(ascii: "&") {
                    if equals == nil, bytes[end] == UInt8(ascii: "=") { equals = end }
                    end += 1
                }
                if end > start {
                    let name = UnsafeBufferPointer(rebasing: bytes[start..<(equals ?? end)])
                    let value = equals.map { UnsafeBufferPointer(rebasing: bytes[($0 + 1)..<end]) }
                    items.append(
                        (
                            decodeContiguous(name, plusIsSpace: true),
                            value.map { decodeContiguous($0, plusIsSpace: true) } ?? ""
                        )
                    )
                }
                start = end + 1
            }
            return items
        }
    }

    /// `decode` over contiguous bytes; text without `%` or `+` (most of it) becomes a string in one copy.
    private static func decodeContiguous(_ bytes: UnsafeBufferPointer<UInt8>, plusIsSpace: Bool) -> String {
        if !bytes.contains(where: { $0 == UInt8(ascii: "%") || ($0 == UInt8(ascii: "+") && plusIsSpace) }) {
            return String(decoding: bytes, as: UTF8.self)
        }
        return decode(bytes, plusIsSpace: plusIsSpace)
    }

    /// Decodes `%XX` escapes; a malformed escape is kept as it was written.
    public static func decode(_ bytes: some Collection<UInt8>, plusIsSpace: Bool) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                let first = bytes.index(after: index)
                if first != bytes.endIndex {
                    let second = bytes.index(after: first)
                    if second != bytes.endIndex, let high = hexValue(bytes[first]), let low = hexValue(bytes[second]) {
                        output.append(high << 4 | low)
                        index = bytes.index(after: second)
                        continue
                    }
                }
                output.append(byte)
            } else if byte == UInt8(ascii: "+") && plusIsSpace {
                output.append(UInt8(ascii: " "))
            } else {
                output.append(byte)
            }
            index = bytes.index(after: index)
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes a path segment strictly: nil when an escape is malformed or decodes to a byte that is not allowed
    /// inside one segment (`/`, NUL), so `%2F` can never smuggle a separator.
    public static func decodePathSegment(_ segment: Substring) -> String? {
        let bytes = Array(segment.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, let high = hexValue(bytes[index + 1]),
                    let low = hexValue(bytes[index + 2])
                else { return nil }
                let decoded = high << 4 | low
                guard decoded != UInt8(ascii: "/"), decoded != 0, decoded != UInt8(ascii: "\\") else { return nil }
                output.append(decoded)
                index += 3
            } else {
                output.append(byte)
                index += 1
            }
        }
        return String(validating: output, as: UTF8.self)
    }

    /// The value of an ASCII hex digit, or nil.
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
