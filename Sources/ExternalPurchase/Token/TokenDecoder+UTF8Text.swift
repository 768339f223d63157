extension TokenDecoder {
    /// Whether `json` is JSON text as RFC 8259 §8.1 has systems exchange it: UTF-8, with no byte order mark.
    /// Foundation's reader also takes UTF-16 and UTF-32 (told apart by a mark or by the NUL bytes of the first
    /// characters) and a leading UTF-8 mark, and repairs bytes that are not UTF-8; the checks for a key named twice
    /// and for a trailing comma read UTF-8 only, so such a text carried a repeated key past them. A NUL byte is
    /// in no JSON text (a control character in a string is escaped).
    public static func isUTF8JSONText(_ json: [UInt8]) -> Bool {
        if json.starts(with: utf8ByteOrderMark) || json.contains(0) { return false }
        return String(validating: json, as: UTF8.self) != nil
    }

    /// The UTF-8 byte order mark (U+FEFF), which an editor may put at the start of a file.
    public static let utf8ByteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
}
