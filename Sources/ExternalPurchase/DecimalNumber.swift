import Foundation

/// A decimal number kept as its text, for Apple's `exchangeRate`. Apple's field is "a number that can optionally be
/// followed by a '.'" (Apple: "exchangeRate"): plain digits, never an exponent. A `Double` would write a UZS rate as
/// `7.9e-05` and carry a binary approximation of the operator's figure, so the rate stays decimal text from the
/// configuration to the request body: written as a JSON number with exactly the digits given (through `Decimal`, which
/// is base 10 and holds 38 digits exactly).
public struct DecimalNumber: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Canonical plain text: an optional `-`, no leading zeros before the point (but one `0`), no trailing
    /// zeros after it, no trailing point. `"3.2510"` is kept as `"3.251"`, so equal rates compare equal.
    public let text: String

    /// Nil unless `text` is an optional `-`, digits, and at most one `.` with digits after it (at most 38
    /// digits in all, what `Decimal` holds exactly).
    public init?(_ text: String) {
        var body = Substring(text)
        let negative = body.hasPrefix("-")
        if negative { body = body.dropFirst() }
        let parts = body.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts[0]
        let fraction = parts.count > 1 ? parts[1] : ""
        guard !whole.isEmpty || !fraction.isEmpty, whole.utf8.count + fraction.utf8.count <= 38,
            (whole + fraction).utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
        else { return nil }
        var integer = whole.drop { $0 == "0" }
        if integer.isEmpty { integer = "0" }
        var decimals = fraction
        while decimals.hasSuffix("0") { decimals = decimals.dropLast() }
        let plain = decimals.isEmpty ? String(integer) : "\(integer).\(decimals)"
        self.text = negative && plain != "0" ? "-" + plain : plain
    }

    /// Above zero.
    public var isPositive: Bool { !text.hasPrefix("-") && text != "0" }

    public var description: String { text }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        // JSON number text is read into `Decimal` digit by digit (no binary floating point on the way).
        let value = try container.decode(Decimal.self)
        guard let number = DecimalNumber(value.description) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a plain decimal number")
        }
        self = number
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        // `Decimal` is written as a JSON number in plain notation, with the same digits.
        guard let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
            throw EncodingError.invalidValue(text, .init(codingPath: encoder.codingPath, debugDescription: text))
        }
        try container.encode(value)
    }
}
