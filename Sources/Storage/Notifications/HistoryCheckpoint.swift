public import Domain

/// How far a notification history recovery got for one app and environment in one window (`history_recovery`).
public struct HistoryCheckpoint: Sendable, Equatable {
    public var bundleId: BundleID
    public var environment: Environment
    /// The window asked for (UNIX ms): Apple's pagination token belongs to this exact query.
    public var startDate: Int64
    public var endDate: Int64
    /// The token of the next page to fetch; nil once this app and environment are done.
    public var paginationToken: String?
    /// Pages and notifications fetched so far in the window, for the operator.
    public var pages: Int64
    public var fetched: Int64
    public var updatedAt: Int64

    public init(
        bundleId: BundleID,
        environment: Environment,
        startDate: Int64,
        endDate: Int64,
        paginationToken: String?,
        pages: Int64,
        fetched: Int64,
        updatedAt: Int64
    ) {
        self.bundleId = bundleId
        self.environment = environment
        self.startDate = startDate
        self.endDate = endDate
        self.paginationToken = paginationToken
        self.pages = pages
        self.fetched = fetched
        self.updatedAt = updatedAt
    }
}
