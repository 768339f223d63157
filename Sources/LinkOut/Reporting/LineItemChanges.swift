import Foundation

/// What a new version of a line item changes against the one before, as the restatement's outcome (and so the
/// audit trail) says it: each field whose value differs, `name old → new`. A restatement's entry said only that a
/// line item was stored, not what Apple would now be told. Line items hold ids, dates, amounts and codes: nothing
/// here is a secret.
enum LineItemChanges {
    static func describe(from previous: String?, to next: String) -> String {
        guard let previous, let before = fields(previous), let after = fields(next) else { return "" }
        // `restatement` and the net follow from the rest (the outcome says when they were set).
        let changed = Set(before.keys).union(after.keys).subtracting(["restatement", "netAmountTaxExclusive"])
            .sorted().filter { before[$0] != after[$0] }
        guard !changed.isEmpty else { return "; no field changed" }
        return "; changed: "
            + changed.map { "\($0) \(before[$0] ?? "none") → \(after[$0] ?? "none")" }.joined(separator: ", ")
    }

    /// Whether `next` says to Apple what `previous` says: every field the same, the net included, whatever the
    /// `restatement` flag (which follows from whether Apple holds a version).
    static func changesNothing(from previous: String, to next: String) -> Bool {
        guard var before = fields(previous), var after = fields(next) else { return false }
        before["restatement"] = nil
        after["restatement"] = nil
        return before == after
    }

    /// The body's top-level fields as text (numbers as written), or nil when it is not a JSON object.
    private static func fields(_ body: String) -> [String: String]? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] else {
            return nil
        }
        return object.mapValues { value in
            if let text = value as? String { return text }
            if let data = try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed]) {
                return String(decoding: data, as: UTF8.self)
            }
            return "\(value)"
        }
    }
}
