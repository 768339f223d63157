/// Whether `value` is a URI's host and optional port (RFC 3986 §3.2.2, §3.2.3), as a `Host` field or an absolute
/// target's authority must be (RFC 9112 §3.2: otherwise 400). Empty is allowed (a target with no authority).
/// - An IP literal is one bracketed IPv6 address (hex digits, `:` and `.`), with a zone after `%25` (RFC 6874),
///   or a future form (`v`, hex digits, `.`, then a name's characters or `:`), with nothing between its `]` and
///   the port's `:`.
/// - A name is unreserved characters, sub-delimiters and percent-encoded bytes (two hex digits, never a control
///   character), without `,`: RFC 3986 allows one in a name, but no host has one, and `a.example,b.example` is two
///   `Host` fields a proxy joined, read as one host by one reader and as the other by the next.
/// - A port is at most five digits, up to 65535.
func isHost(_ value: String) -> Bool {
    let bytes = Array(value.utf8)
    guard !bytes.isEmpty else { return true }
    let hostEnd: Int
    if bytes[0] == UInt8(ascii: "[") {
        guard let close = bytes.firstIndex(of: UInt8(ascii: "]")), close > 1,
            isIPLiteral(bytes[1..<close])
        else { return false }
        hostEnd = close + 1
        guard hostEnd == bytes.count || bytes[hostEnd] == UInt8(ascii: ":") else { return false }
    } else {
        hostEnd = bytes.firstIndex(of: UInt8(ascii: ":")) ?? bytes.count
        guard isRegisteredName(bytes[0..<hostEnd]) else { return false }
    }
    return hostEnd == bytes.count || isPort(bytes[(hostEnd + 1)...])
}

/// RFC 3986 §3.2.3: digits; here at most five and a port TCP has (an empty port means the default).
private func isPort(_ digits: ArraySlice<UInt8>) -> Bool {
    guard digits.count <= 5, digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return false }
    return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) } <= 65_535
}

/// An IPv6 address's characters (its form is left to the resolver), or `v` and a future form's.
private func isIPLiteral(_ inner: ArraySlice<UInt8>) -> Bool {
    if inner.first == UInt8(ascii: "v") || inner.first == UInt8(ascii: "V") {
        // IPvFuture = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" ), without the name's `,`.
        let version = inner.dropFirst().prefix { FormDecoding.hexValue($0) != nil }
        let rest = inner.dropFirst(1 + version.count)
        return !version.isEmpty && rest.first == UInt8(ascii: ".") && rest.count > 1
            && rest.dropFirst().allSatisfy { isNameByte($0) || $0 == UInt8(ascii: ":") }
    }
    var address = inner
    if let zone = zoneStart(inner) {
        // RFC 6874: a zone of unreserved characters or percent-encoded bytes, never empty.
        let name = inner[(zone + 3)...]
        guard !name.isEmpty, isRegisteredName(name), !name.contains(where: isSubDelimiter) else { return false }
        address = inner[..<zone]
    }
    return address.contains(UInt8(ascii: ":"))
        && address.allSatisfy {
            FormDecoding.hexValue($0) != nil || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".")
        }
}

/// Where `%25`, the escaped `%` before an IPv6 zone, starts, if anywhere.
private func zoneStart(_ inner: ArraySlice<UInt8>) -> Int? {
    inner.indices.first { index in
        inner[index] == UInt8(ascii: "%") && inner[(index + 1)...].starts(with: [UInt8(ascii: "2"), UInt8(ascii: "5")])
    }
}

private func isRegisteredName(_ name: ArraySlice<UInt8>) -> Bool {
    var index = name.startIndex
    while index < name.endIndex {
        let byte = name[index]
        if byte == UInt8(ascii: "%") {
            guard name.endIndex - index >= 3, let high = FormDecoding.hexValue(name[index + 1]),
                let low = FormDecoding.hexValue(name[index + 2]), high << 4 | low >= 0x20, high << 4 | low != 0x7F
            else { return false }
            index += 3
            continue
        }
        guard isNameByte(byte) else { return false }
        index += 1
    }
    return true
}

/// RFC 3986's sub-delimiters.
private func isSubDelimiter(_ byte: UInt8) -> Bool { "!$&'()*+,;=".utf8.contains(byte) }

/// RFC 3986's unreserved characters and sub-delimiters, but `,` (see `isHost`).
private func isNameByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), 0x30...0x39: true
    case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
    case UInt8(ascii: ","): false
    default: isSubDelimiter(byte)
    }
}
