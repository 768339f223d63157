/// Reads of Paddle's field shapes with the typed JSON reader every provider uses: amounts are strings of an integer in
/// the currency's lowest denomination (`"1088"`, docs/provider-facts.md), and times are RFC 3339 text.
extension ProviderJSON {
    /// A signed amount string. Paddle's amounts may be negative on subscription changes (Paddle API reference:
    /// Transactions). Bounded as `optionalInteger` is, so no later conversion to milli-units overflows.
    func paddleSignedAmount(_ key: String) throws(ProviderJSONError) -> Int64 {
        guard let value = try optionalPaddleSignedAmount(key) else { throw .missingField(fieldName(key)) }
        return value
    }

    func optionalPaddleSignedAmount(_ key: String) throws(ProviderJSONError) -> Int64? {
        guard let text = try optionalString(key) else { return nil }
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            throw .wrongType(fieldName(key))
        }
        guard digits.utf8.count <= 13, let value = Int64(text),
            (-Self.largestInteger...Self.largestInteger).contains(value)
        else { throw .outOfRange(fieldName(key)) }
        return value
    }

    /// An amount Paddle sends as zero or more (what a one-time buy or a renewal charged, what was refunded).
    func paddleAmount(_ key: String) throws(ProviderJSONError) -> Int64 {
        let value = try paddleSignedAmount(key)
        guard value >= 0 else { throw .negative(fieldName(key)) }
        return value
    }

    /// An RFC 3339 time as UNIX milliseconds.
    func paddleTime(_ key: String) throws(ProviderJSONError) -> Int64 {
        guard let value = try optionalPaddleTime(key) else { throw .missingField(fieldName(key)) }
        return value
    }

    func optionalPaddleTime(_ key: String) throws(ProviderJSONError) -> Int64? {
        guard let text = try optionalString(key) else { return nil }
        guard let milliseconds = PaddleTimestamp.milliseconds(text) else { throw .wrongType(fieldName(key)) }
        return milliseconds
    }
}
