/// The `requestIdentifier` of one External Purchase report: a UUID that Apple uses to recognise a report sent
/// again, so a retry never counts twice.
public struct RequestIdentifier: Identifier {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
}
