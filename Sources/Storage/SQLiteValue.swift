/// A value bound to a `?` parameter or read from a column.
enum SQLiteValue: Sendable, Equatable {
    case integer(Int64)
    case text(String)
    case null

    var integer: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    var text: String? {
        if case .text(let value) = self { return value }
        return nil
    }
}

extension SQLiteValue {
    /// `.text` or `.null` for an optional string.
    static func optional(_ value: String?) -> SQLiteValue { value.map(SQLiteValue.text) ?? .null }
    /// `.integer` or `.null` for an optional integer.
    static func optional(_ value: Int64?) -> SQLiteValue { value.map(SQLiteValue.integer) ?? .null }
}
