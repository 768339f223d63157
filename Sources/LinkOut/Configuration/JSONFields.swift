/// Typed reads from a JSON object, each failure naming the field's dotted path (`server.port`, `apps[0].name`).
struct JSONFields {
    let object: [String: JSONValue]
    let path: String

    init(_ object: [String: JSONValue], path: String) {
        self.object = object
        self.path = path
    }

    func name(_ key: String) -> String { path.isEmpty ? key : path + "." + key }

    private func mismatch(_ key: String, _ expected: String) -> ConfigurationError {
        ConfigurationError(
            field: name(key),
            problem: "must be \(expected), found \(object[key]?.typeName ?? "nothing")"
        )
    }

    /// Refuses keys the schema does not know, so a typo cannot silently fall back to a default.
    func rejectUnknownKeys(_ known: Set<String>) throws(ConfigurationError) {
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw ConfigurationError(field: name(unknown), problem: "unknown field")
        }
    }

    func string(_ key: String, default fallback: String) throws(ConfigurationError) -> String {
        switch object[key] {
        case nil, .null: return fallback
        case .string(let text): return text
        default: throw mismatch(key, "a string")
        }
    }

    func optionalString(_ key: String) throws(ConfigurationError) -> String? {
        switch object[key] {
        case nil, .null: return nil
        case .string(let text): return text
        default: throw mismatch(key, "a string")
        }
    }

    func requiredString(_ key: String) throws(ConfigurationError) -> String {
        guard case .string(let text) = object[key] else { throw mismatch(key, "a string") }
        return text
    }

    func integer(_ key: String, default fallback: Int64, range: ClosedRange<Int64>) throws(ConfigurationError) -> Int64
    {
        let number: Int64
        switch object[key] {
        case nil, .null: return fallback
        case .integer(let value): number = value
        default: throw mismatch(key, "an integer")
        }
        guard range.contains(number) else {
            throw ConfigurationError(
                field: name(key),
                problem: "must be between \(range.lowerBound) and \(range.upperBound), found \(number)"
            )
        }
        return number
    }

    func int(_ key: String, default fallback: Int, range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        Int(try integer(key, default: Int64(fallback), range: Int64(range.lowerBound)...Int64(range.upperBound)))
    }

    func requiredInteger(_ key: String) throws(ConfigurationError) -> Int64 {
        guard case .integer(let value) = object[key] else { throw mismatch(key, "an integer") }
        return value
    }

    func bool(_ key: String, default fallback: Bool) throws(ConfigurationError) -> Bool {
        switch object[key] {
        case nil, .null: return fallback
        case .bool(let flag): return flag
        default: throw mismatch(key, "true or false")
        }
    }

    func strings(_ key: String, default fallback: [String] = []) throws(ConfigurationError) -> [String] {
        switch object[key] {
        case nil, .null: return fallback
        case .array(let items):
            var texts: [String] = []
            for (index, item) in items.enumerated() {
                guard case .string(let text) = item else {
                    throw ConfigurationError(field: "\(name(key))[\(index)]", problem: "must be a string")
                }
                texts.append(text)
            }
            return texts
        default: throw mismatch(key, "a list of strings")
        }
    }

    /// String-to-string map (localized names, prices by currency).
    func stringMap(_ key: String) throws(ConfigurationError) -> [String: String] {
        switch object[key] {
        case nil, .null: return [:]
        case .object(let entries):
            var map: [String: String] = [:]
            for (entryKey, value) in entries {
                guard case .string(let text) = value else {
                    throw ConfigurationError(field: "\(name(key)).\(entryKey)", problem: "must be a string")
                }
                map[entryKey] = text
            }
            return map
        default: throw mismatch(key, "an object")
        }
    }

    func section(_ key: String) throws(ConfigurationError) -> JSONFields {
        switch object[key] {
        case nil, .null: return JSONFields([:], path: name(key))
        case .object(let nested): return JSONFields(nested, path: name(key))
        default: throw mismatch(key, "an object")
        }
    }

    func list(_ key: String) throws(ConfigurationError) -> [JSONFields] {
        switch object[key] {
        case nil, .null: return []
        case .array(let items):
            var result: [JSONFields] = []
            for (index, item) in items.enumerated() {
                guard case .object(let nested) = item else {
                    throw ConfigurationError(field: "\(name(key))[\(index)]", problem: "must be an object")
                }
                result.append(JSONFields(nested, path: "\(name(key))[\(index)]"))
            }
            return result
        default: throw mismatch(key, "a list")
        }
    }
}

extension JSONFields {
    /// An integer in `range`, or nil when the field is absent or null.
    func optionalInteger(_ key: String, range: ClosedRange<Int64>) throws(ConfigurationError) -> Int64? {
        switch object[key] {
        case nil, .null: return nil
        default: return try integer(key, default: 0, range: range)
        }
    }
}
