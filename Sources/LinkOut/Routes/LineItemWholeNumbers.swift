import Foundation

/// Every number of Apple's line item is a whole one (milliunits, UNIX ms, days, a quantity) but `exchangeRate`, a
/// decimal. Foundation's decoder answers a fraction, or a number past Int64, in an integer field with "not valid
/// JSON" and no field, so a refused body is read again to name the field.
enum LineItemWholeNumbers {
    /// Fields Apple types as 32-bit integers: a whole number past them fails the same way.
    static let int32Fields: Set<String> = ["subscriptionDaysOfPaidService"]

    /// The first field of `item` (a line item's JSON object) holding a number that is not whole or not an Int64
    /// (an Int32 where Apple's type is one).
    static func firstOffending(in item: [String: Any]) -> String? {
        item.keys.sorted().first { field in
            guard field != "exchangeRate", let double = (item[field] as? NSNumber)?.doubleValue else { return false }
            if int32Fields.contains(field) { return double.rounded() != double || Int32(exactly: double) == nil }
            return double.rounded() != double || Int64(exactly: double) == nil
        }
    }

    /// The first such field of the JSON object `body` (one line item) or of each item in its `lineItems`.
    static func firstOffending(inBody body: [UInt8]) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else { return nil }
        let items = object["lineItems"] as? [[String: Any]] ?? [object]
        return items.lazy.compactMap(firstOffending(in:)).first
    }

    /// What the answer says of `field`.
    static func message(_ field: String) -> String {
        "the field \(field) must be a whole number in its field's range (amounts are in milliunits)"
    }
}
