import Domain
import Foundation

/// Typed reads from one JSON object of a provider's payload (Stripe's events, Paddle's notifications and API
/// answers), each failure naming the dotted path of the field (`data.object.amount_total`), so a malformed event
/// says what is wrong without echoing the payload.
struct ProviderJSON {
    let object: [String: Any]
    let path: String

    init(_ object: [String: Any], path: String) {
        self.object = object
        self.path = path
    }

    /// The top-level object of a JSON document.
    static func parse(_ bytes: [UInt8]) throws(ProviderJSONError) -> ProviderJSON {
        guard let value = try? JSONSerialization.jsonObject(with: Data(bytes)), let object = value as? [String: Any]
        else { throw .notJSON }
        return ProviderJSON(object, path: "")
    }

    /// The dotted path of `key` in this object, as errors name it.
    func fieldName(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    private func present(_ key: String) -> Any? {
        guard let value = object[key], !(value is NSNull) else { return nil }
        return value
    }

    func string(_ key: String) throws(ProviderJSONError) -> String {
        guard let value = try optionalString(key) else { throw .missingField(fieldName(key)) }
        return value
    }

    func optionalString(_ key: String) throws(ProviderJSONError) -> String? {
        guard let value = present(key) else { return nil }
        guard let text = value as? String else { throw .wrongType(fieldName(key)) }
        return text
    }

    func integer(_ key: String) throws(ProviderJSONError) -> Int64 {
        guard let value = try optionalInteger(key) else { throw .missingField(fieldName(key)) }
        return value
    }

    /// A JSON integer (Stripe's amounts and timestamps); a fraction is a malformed payload, never rounded.
    /// Read through the number's decimal text, so no amount passes through floating point. Anything beyond
    /// ±10^12 is refused: Stripe's amounts have at most 8 digits and its timestamps 10, and staying far below
    /// Int64's range keeps every later conversion (seconds to milliseconds, minor units to milli-units) from
    /// overflowing on a hostile or broken value.
    func optionalInteger(_ key: String) throws(ProviderJSONError) -> Int64? {
        guard let value = present(key) else { return nil }
        guard let number = value as? NSNumber else { throw .wrongType(fieldName(key)) }
        guard let integer = Int64(number.stringValue) else {
            // Past Int64 (its text then has an exponent), or a fraction.
            throw abs(number.doubleValue) > Double(Self.largestInteger)
                ? .outOfRange(fieldName(key)) : .wrongType(fieldName(key))
        }
        guard (-Self.largestInteger...Self.largestInteger).contains(integer) else { throw .outOfRange(fieldName(key)) }
        return integer
    }

    static let largestInteger: Int64 = 1_000_000_000_000

    /// An amount a provider never sends below zero (what was charged, paid, refunded, or taxed). A signed event with a
    /// negative one is broken or forged with a leaked secret, and must not become a "paid" purchase or a negative
    /// sale reported to Apple.
    func amount(_ key: String) throws(ProviderJSONError) -> Int64 {
        guard let value = try optionalAmount(key) else { throw .missingField(fieldName(key)) }
        return value
    }

    func optionalAmount(_ key: String) throws(ProviderJSONError) -> Int64? {
        guard let value = try optionalInteger(key) else { return nil }
        guard value >= 0 else { throw .negative(fieldName(key)) }
        return value
    }

    /// A currency code as the provider writes it (Stripe in lower case): three ASCII letters. Anything else
    /// (empty, a NUL after `eur`) was held as a sale waiting for the exchange rate of a currency that has none,
    /// for good.
    func currency(_ key: String) throws(ProviderJSONError) -> String {
        guard let value = try optionalCurrency(key) else { throw .missingField(fieldName(key)) }
        return value
    }

    func optionalCurrency(_ key: String) throws(ProviderJSONError) -> String? {
        guard let text = try optionalString(key) else { return nil }
        guard text.utf8.count == 3, text.utf8.allSatisfy(ASCIIBytes.isLetter) else {
            throw .notACurrency(fieldName(key))
        }
        return text
    }

    func optionalBool(_ key: String) throws(ProviderJSONError) -> Bool? {
        guard let value = present(key) else { return nil }
        guard let flag = value as? Bool else { throw .wrongType(fieldName(key)) }
        return flag
    }

    func child(_ key: String) throws(ProviderJSONError) -> ProviderJSON {
        guard let value = try optionalChild(key) else { throw .missingField(fieldName(key)) }
        return value
    }

    func optionalChild(_ key: String) throws(ProviderJSONError) -> ProviderJSON? {
        guard let value = present(key) else { return nil }
        guard let object = value as? [String: Any] else { throw .wrongType(fieldName(key)) }
        return ProviderJSON(object, path: fieldName(key))
    }

    /// The objects of an array field (`total_taxes`, `lines.data`); absent is empty.
    func children(_ key: String) throws(ProviderJSONError) -> [ProviderJSON] {
        guard let value = present(key) else { return [] }
        guard let array = value as? [Any] else { throw .wrongType(fieldName(key)) }
        var result: [ProviderJSON] = []
        for (index, element) in array.enumerated() {
            guard let object = element as? [String: Any] else { throw .wrongType("\(fieldName(key))[\(index)]") }
            result.append(ProviderJSON(object, path: "\(fieldName(key))[\(index)]"))
        }
        return result
    }

    /// An id the provider made (`pi_…`, `txn_…`).
    func id(_ key: String) throws(ProviderJSONError) -> String {
        guard let value = try optionalID(key) else { throw .missingField(fieldName(key)) }
        return value
    }

    /// An id field sent as a string (Stripe's), or as the object itself when expanded: letters, digits, `_` and
    /// `-`, 1 to 255 of them, as the providers make them. A line item's id for Apple is built from it, the
    /// operator reads it back, and Paddle's is part of an API address: an empty one, one with a bidi override,
    /// a `/`, or thousands of characters is no provider's.
    func optionalID(_ key: String) throws(ProviderJSONError) -> String? {
        guard let text = try optionalReference(key) else { return nil }
        guard text.utf8.allSatisfy(ASCIIBytes.isIdentifier) else { throw .notAnId(fieldName(key)) }
        return text
    }

    /// A reference only compared, never part of a line item's id or an address (a Stripe price or plan: a legacy
    /// plan's id is the developer's own, such as `pro.monthly`): any text of 1 to 255 bytes, as a string or the
    /// object itself when expanded.
    func optionalReference(_ key: String) throws(ProviderJSONError) -> String? {
        guard let value = present(key) else { return nil }
        let text: String
        if let string = value as? String {
            text = string
        } else if let object = value as? [String: Any], let id = object["id"] as? String {
            text = id
        } else {
            throw .wrongType(fieldName(key))
        }
        guard (1...255).contains(text.utf8.count) else { throw .notAnId(fieldName(key)) }
        return text
    }
}
