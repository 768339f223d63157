/// A request body the way Stripe's API reads it: `application/x-www-form-urlencoded` with Stripe's nesting (as Stripe's
/// SDKs encode it): objects as `a[b]=v`, arrays always indexed (`line_items[0][quantity]=1`), booleans as
/// `true`/`false`, nothing for absent values. Fields keep the order they were added in, so a body is byte-for-byte the
/// same each time it is built (a retry under the same `Idempotency-Key` must not differ).
public struct StripeForm: Sendable, Equatable {
    public indirect enum Value: Sendable, Equatable {
        case string(String)
        case integer(Int64)
        case boolean(Bool)
        case object([Field])
        case array([Value])
    }

    public struct Field: Sendable, Equatable {
        public var name: String
        public var value: Value

        public init(_ name: String, _ value: Value) {
            self.name = name
            self.value = value
        }
    }

    public private(set) var fields: [Field]

    public init(_ fields: [Field] = []) {
        self.fields = fields
    }

    public mutating func add(_ name: String, _ value: Value) {
        fields.append(Field(name, value))
    }

    /// The flattened `(key, value)` pairs, keys with their brackets, before percent-encoding.
    public var pairs: [(key: String, value: String)] {
        var result: [(key: String, value: String)] = []
        for field in fields { Self.flatten(field.value, key: field.name, into: &result) }
        return result
    }

    /// The encoded body.
    public var encoded: String {
        pairs.map { Self.percentEncode($0.key, keepBrackets: true) + "=" + Self.percentEncode($0.value) }
            .joined(separator: "&")
    }

    public var bytes: [UInt8] { Array(encoded.utf8) }

    private static func flatten(_ value: Value, key: String, into result: inout [(key: String, value: String)]) {
        switch value {
        case .string(let text): result.append((key, text))
        case .integer(let number): result.append((key, String(number)))
        case .boolean(let flag): result.append((key, flag ? "true" : "false"))
        case .object(let fields):
            for field in fields { flatten(field.value, key: "\(key)[\(field.name)]", into: &result) }
        case .array(let values):
            for (index, element) in values.enumerated() { flatten(element, key: "\(key)[\(index)]", into: &result) }
        }
    }

    /// Percent-encodes everything but RFC 3986's unreserved characters (UTF-8 bytes, upper-case hex). Keys keep their
    /// `[` `]` literal, as Stripe's own SDKs send them (stripe-python's request encoder), which keeps bodies readable
    /// in tests.
    static func percentEncode(_ text: String, keepBrackets: Bool = false) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                bytes.append(byte)
            case UInt8(ascii: "[") where keepBrackets, UInt8(ascii: "]") where keepBrackets:
                bytes.append(byte)
            default:
                bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension StripeForm.Value: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(booleanLiteral value: Bool) { self = .boolean(value) }
}
