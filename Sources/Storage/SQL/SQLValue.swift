/// A value bound to a `?` parameter or read from a column.
package enum SQLValue: Sendable, Equatable {
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

extension SQLValue {
    /// `.text` or `.null` for an optional string.
    static func optional(_ value: String?) -> SQLValue { value.map(SQLValue.text) ?? .null }
    /// `.integer` or `.null` for an optional integer.
    static func optional(_ value: Int64?) -> SQLValue { value.map(SQLValue.integer) ?? .null }
}
