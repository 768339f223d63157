public import Domain

/// How Apple's rejection changes a report before it goes again under the same `requestIdentifier` (Apple's "Send
/// External Purchase Report": after a `400`, send the full report again under the same requestIdentifier): a new
/// body and status, and the line items Apple named, set aside with its message.
public struct ReportRewrite: Sendable, Equatable {
    /// The report's new JSON body and status, or nil to keep them.
    public var body: String?
    public var status: ReportStatus?
    /// `lineItemId` → Apple's message: the items leave the report and wait for the operator's correction.
    public var setAside: [String: String]

    public init(body: String? = nil, status: ReportStatus? = nil, setAside: [String: String] = [:]) {
        self.body = body
        self.status = status
        self.setAside = setAside
    }
}
