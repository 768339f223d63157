public import Domain
import Foundation

/// Apple's `SendReportErrorResponse` (Apple: "SendReportErrorResponse", "Error messages and codes"): the body of a
/// `400` to Send External Purchase Report when validation failed. Every field of an error object is optional here:
/// Apple marks `fieldName` as absent on `SimultaneousSubmissionError` and `lineItemId` as optional on most errors, and
/// the numeric `errorCode` values are not published, so decisions are made from what the body carries, never from the
/// code alone.
public struct SendReportErrorResponse: Sendable, Equatable, Codable {
    public struct Failure: Sendable, Equatable, Codable {
        public var errorCode: Int64?
        public var errorMessage: String?
        public var fieldName: String?
        public var lineItemId: LineItemID?

        public init(
            errorCode: Int64? = nil,
            errorMessage: String? = nil,
            fieldName: String? = nil,
            lineItemId: LineItemID? = nil
        ) {
            self.errorCode = errorCode
            self.errorMessage = errorMessage
            self.fieldName = fieldName
            self.lineItemId = lineItemId
        }

        /// One line for people: Apple's message, the field and the line item it names, and the code.
        public var summary: String {
            var text = errorMessage ?? "no message"
            if let fieldName { text += " (field \(fieldName))" }
            if let lineItemId { text += " (line item \(lineItemId))" }
            if let errorCode { text += " [\(errorCode)]" }
            return text
        }
    }

    public var errors: [Failure]

    public init(errors: [Failure]) {
        self.errors = errors
    }

    /// The errors of a `400` body, or nil when the body is not a `SendReportErrorResponse` with at least one
    /// error (Apple's "malformed" or "duplicate request" answers need not carry one).
    /// A `fieldName` or `lineItemId` that is empty (or only spaces) names nothing, as an absent one: a
    /// `SimultaneousSubmissionError` with `"fieldName": ""` is still one.
    public static func parse(_ body: String) -> SendReportErrorResponse? {
        guard var parsed = try? JSONDecoder().decode(Self.self, from: Data(body.utf8)), !parsed.errors.isEmpty else {
            return nil
        }
        let namesNothing = { (text: String?) in text?.allSatisfy(\.isWhitespace) ?? true }
        for index in parsed.errors.indices {
            if namesNothing(parsed.errors[index].fieldName) { parsed.errors[index].fieldName = nil }
            if namesNothing(parsed.errors[index].lineItemId?.rawValue) { parsed.errors[index].lineItemId = nil }
        }
        return parsed
    }
}
