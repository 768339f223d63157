public import Domain

/// A rule of Apple's External Purchase Server API that a report breaks, found before anything is sent. `name`
/// is the error object Apple would answer with (`IncorrectAmountTaxInclusiveError`, ...).
public struct ReportProblem: Error, Sendable, Equatable, Codable, CustomStringConvertible {
    public var name: String
    public var fieldName: String?
    public var lineItemId: LineItemID?
    public var message: String

    public init(_ name: String, field: String? = nil, lineItem: LineItemID? = nil, _ message: String) {
        self.name = name
        self.fieldName = field
        self.lineItemId = lineItem
        self.message = message
    }

    public var description: String {
        "\(name)" + (fieldName.map { " (\($0))" } ?? "") + (lineItemId.map { " in \($0)" } ?? "") + ": \(message)"
    }
}
