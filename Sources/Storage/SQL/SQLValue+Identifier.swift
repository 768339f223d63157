import Domain

extension SQLValue {
    /// An id is stored as its text.
    static func id(_ value: some Identifier) -> SQLValue { .text(value.rawValue) }

    /// `.text` or `.null` for an optional id.
    static func optional<T: Identifier>(_ value: T?) -> SQLValue { value.map { .text($0.rawValue) } ?? .null }

    /// The id a text column holds (nil for NULL).
    func id<T: Identifier>(_: T.Type = T.self) -> T? { text.map(T.init(rawValue:)) }
}
