/// Why an operator's action on the signing keys or a credential was refused, in words for the operator.
struct AppAccessRefusal: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
