/// A name the domain gives one kind of thing (a token's purchase, a checkout, a line item, a product, ...), kept
/// as text wherever it is stored or sent. Each kind is its own type, so an id of one kind handed where another is
/// expected does not compile: the ledger once keyed a charge by a purchase id because both were `String`.
///
/// A literal converts, interpolated or not (tests and fixed names read naturally); a `String` variable converts
/// only by naming the kind, `ExternalPurchaseID(text)`.
public protocol Identifier: RawRepresentable, Hashable, Comparable, Sendable, Codable, CustomStringConvertible,
    ExpressibleByStringInterpolation
where RawValue == String {
    init(rawValue: String)
}

extension Identifier {
    public init(_ rawValue: String) { self.init(rawValue: rawValue) }

    public init(stringLiteral value: String) { self.init(rawValue: value) }

    public var description: String { rawValue }

    // An id is its bytes. Swift's String equality is canonical equivalence (a precomposed "é" equals "e" and a
    // combining accent), but the ledger's SQL and Apple compare bytes: a refund naming its buy's id in the other
    // form passed here as the same id, was stored under another, and Apple would refuse it. Equality and hashing
    // are the UTF-8 bytes', as the ledger's keys and Apple's are; order too (SQLite's BINARY collation's, which
    // PostgreSQL's text ordering need not be: nothing orders ids in SQL and in Swift alike).

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.rawValue.utf8.elementsEqual(rhs.rawValue.utf8) }

    public func hash(into hasher: inout Hasher) {
        var text = rawValue
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        hasher.combine(rawValue.utf8.count)
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        lhs.rawValue.utf8.lexicographicallyPrecedes(rhs.rawValue.utf8)
    }

    /// The empty id stands for "none given" in the few records whose column is NOT NULL but may hold no value.
    public var isEmpty: Bool { rawValue.isEmpty }
}
