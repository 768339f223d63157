import Domain

extension SQLValue {
    /// The value of a column that holds one of a closed set (`tokens.environment`, `reports.state`, ...). A value
    /// this version does not know is an error naming the column and the value, never a default: a made-up
    /// `production` or `pending` would send a report to the wrong place or send it again.
    func closedSet<T: RawRepresentable>(_ column: String) throws(StorageError) -> T where T.RawValue == String {
        guard let text, let value = T(rawValue: text) else {
            let found = text.map { "'\($0)'" } ?? "NULL"
            throw StorageError(.unknownValue, "column \(column) holds \(found), which is not a known \(T.self)")
        }
        return value
    }

    /// As `closedSet`, for a column that may be NULL.
    func closedSetIfPresent<T: RawRepresentable>(_ column: String) throws(StorageError) -> T?
    where T.RawValue == String {
        if case .null = self { return nil }
        return try closedSet(column)
    }
}

extension [[SQLValue]] {
    /// Every row through a row decoder (which fails on a value outside its column's closed set).
    func decoded<T>(_ decode: ([SQLValue]) throws(StorageError) -> T) throws(StorageError) -> [T] {
        var values: [T] = []
        values.reserveCapacity(count)
        for row in self { values.append(try decode(row)) }
        return values
    }

    /// The first row through a row decoder, or nil when there is none.
    func firstDecoded<T>(_ decode: ([SQLValue]) throws(StorageError) -> T) throws(StorageError) -> T? {
        guard let row = first else { return nil }
        return try decode(row)
    }
}
