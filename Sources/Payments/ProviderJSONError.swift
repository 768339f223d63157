/// Why an event body could not be decoded. Names a field, never a value.
public enum ProviderJSONError: Error, Sendable, Equatable, CustomStringConvertible {
    case notJSON
    case missingField(String)
    case wrongType(String)
    case unsupported(String)
    /// An amount below zero where the provider only sends zero or more.
    case negative(String)
    /// A whole number past what linkout reads (`ProviderJSON.largestInteger` either way).
    case outOfRange(String)
    /// A currency that is not three letters (ISO 4217's shape).
    case notACurrency(String)
    /// An amount past the one it is part of (more refunded than the charge took).
    case moreThan(String, String)
    /// An id that is not the shape of the provider's ids.
    case notAnId(String)

    public var description: String {
        switch self {
        case .notJSON: "the event is not a JSON object"
        case .missingField(let path): "the event has no \(path)"
        case .wrongType(let path): "the event's \(path) has the wrong type"
        case .unsupported(let what): "unsupported: \(what)"
        case .negative(let path): "the event's \(path) is negative"
        case .outOfRange(let path): "the event's \(path) is out of range (more than 10^12 either way)"
        case .notACurrency(let path): "the event's \(path) is not a currency code (three letters)"
        case .moreThan(let path, let whole): "the event's \(path) is more than its \(whole)"
        case .notAnId(let path): "the event's \(path) is not an id (1 to 255 letters, digits, _ or -)"
        }
    }
}
