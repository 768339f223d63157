/// Header fields in arrival order, names as written. Lookups ignore ASCII case (RFC 9110 §5.1).
public struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    public struct Field: Sendable, Equatable {
        public var name: String
        public var value: String
    }

    private var fields: [Field] = []

    public init() {}

    public init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements { add(name: name, value: value) }
    }

    public var count: Int { fields.count }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// The first value for `name`, or nil.
    public subscript(name: String) -> String? {
        fields.first { Self.equalIgnoringCase($0.name, name) }?.value
    }

    /// Every value for `name`, in order.
    public func values(for name: String) -> [String] {
        fields.filter { Self.equalIgnoringCase($0.name, name) }.map(\.value)
    }

    public mutating func add(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Removes every field named `name`, then adds one with `value`.
    mutating func replace(name: String, value: String) {
        fields.removeAll { Self.equalIgnoringCase($0.name, name) }
        add(name: name, value: value)
    }

    /// How many fields are named `name`.
    func count(of name: String) -> Int {
        fields.reduce(0) { $0 + (Self.equalIgnoringCase($1.name, name) ? 1 : 0) }
    }

    /// Whether any field is named `name`.
    func contains(name: String) -> Bool {
        fields.contains { Self.equalIgnoringCase($0.name, name) }
    }

    static func equalIgnoringCase(_ lhs: String, _ rhs: String) -> Bool {
        let left = lhs.utf8
        let right = rhs.utf8
        guard left.count == right.count else { return false }
        // Most lookups name a field as it was written (ours, or a client's usual spelling): one comparison.
        if lhs == rhs { return true }
        return zip(left, right).allSatisfy { a, b in
            a == b || (a | 0x20 == b | 0x20 && (a | 0x20) >= 0x61 && (a | 0x20) <= 0x7A)
        }
    }
}
