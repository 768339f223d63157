extension TokenDecoder {
    /// `json` as the JSON text RFC 8259 §8.1 has systems exchange, UTF-8, without the byte order mark a reader may
    /// ignore (an editor or an older .NET writer puts one first); nil when it is not that text. Foundation's reader
    /// also takes UTF-16 and UTF-32 (a NUL byte beside each ASCII character; FF FE or FE FF first, which is no
    /// UTF-8) and repairs bytes that are not UTF-8, where the checks for a key named twice and for a trailing comma
    /// read UTF-8: such a text carried a repeated key past them. A NUL byte is in no JSON text (a control
    /// character in a string is escaped). The one rule for every JSON text linkout takes: tokens, API bodies, the
    /// operator's files.
    public static func utf8JSONText(_ json: [UInt8]) -> ArraySlice<UInt8>? {
        let text = json.starts(with: utf8ByteOrderMark) ? json.dropFirst(utf8ByteOrderMark.count) : json[...]
        guard !text.contains(0), String(validating: text, as: UTF8.self) != nil else { return nil }
        return text
    }

    /// The UTF-8 byte order mark (U+FEFF).
    public static let utf8ByteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
}
