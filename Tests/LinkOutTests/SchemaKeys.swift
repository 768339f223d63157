import Foundation

/// Compares the keys of decoded JSON with a JSON Schema's `properties`, following `$ref`, `allOf`, `items` and
/// schema-valued `additionalProperties` (maps), and strings with the schema's `enum`.
struct SchemaKeys {
    var schemas: [String: Any]

    func resolve(_ schema: [String: Any]) -> [String: Any] {
        guard let ref = schema["$ref"] as? String, ref.hasPrefix("#/components/schemas/") else { return schema }
        let name = String(ref.dropFirst("#/components/schemas/".count))
        return resolve(schemas[name] as? [String: Any] ?? [:])
    }

    func properties(_ schema: [String: Any]) -> [String: Any]? {
        let schema = resolve(schema)
        var merged = schema["properties"] as? [String: Any]
        for part in schema["allOf"] as? [[String: Any]] ?? [] {
            guard let more = properties(part) else { continue }
            merged = (merged ?? [:]).merging(more) { first, _ in first }
        }
        return merged
    }

    func mismatches(_ value: Any, _ schema: [String: Any], at path: String) -> [String] {
        let schema = resolve(schema)
        if let array = value as? [Any], let items = schema["items"] as? [String: Any] {
            return array.enumerated().flatMap { mismatches($1, items, at: "\(path)[\($0)]") }
        }
        if let text = value as? String, let allowed = schema["enum"] as? [String], !allowed.contains(text) {
            return ["\(path) is \(text), not in the enum"]
        }
        guard let object = value as? [String: Any] else { return [] }
        guard let properties = properties(schema) else {
            guard let values = schema["additionalProperties"] as? [String: Any] else { return [] }
            return object.flatMap { mismatches($1, values, at: "\(path).\($0)") }
        }
        var found: [String] = []
        let keys = Set(object.keys)
        let documented = Set(properties.keys)
        for key in keys.subtracting(documented).sorted() { found.append("\(path).\(key) is not documented") }
        for key in documented.subtracting(keys).sorted() { found.append("\(path).\(key) is never sent") }
        for (key, nested) in object {
            guard let property = properties[key] as? [String: Any] else { continue }
            found += mismatches(nested, property, at: "\(path).\(key)")
        }
        return found
    }
}
