extension JSONValue {
    /// The dotted path of the first string (or key) holding a NUL character (`\u0000`), or nil. No setting takes
    /// one, and past one C cuts a string short: `"127.0.0.1\u0000evil"` bound 127.0.0.1, and a name with one
    /// reached the checkout page.
    func pathOfNUL(at path: String = "") -> String? {
        switch self {
        case .string(let text): return text.utf8.contains(0) ? path : nil
        case .array(let items):
            for (index, item) in items.enumerated() {
                if let found = item.pathOfNUL(at: "\(path)[\(index)]") { return found }
            }
            return nil
        case .object(let entries):
            for key in entries.keys.sorted() {
                let inner = path.isEmpty ? key : "\(path).\(key)"
                if key.utf8.contains(0) { return inner }
                if let found = entries[key]?.pathOfNUL(at: inner) { return found }
            }
            return nil
        case .null, .bool, .integer, .number: return nil
        }
    }
}
