/// What Apple may refuse us for apart from the rest: one app in one environment. A report's JWT names its app
/// (`bid`) and goes to its environment's host, so Apple's 401 or an undocumented answer for one app, or from the
/// sandbox host, says nothing about another app's reports or the other host's.
public struct ReportingScope: Sendable, Hashable, Comparable {
    public var environment: Environment
    public var bundleId: BundleID

    public init(environment: Environment, bundleId: BundleID) {
        self.environment = environment
        self.bundleId = bundleId
    }

    /// `com.example (production)`, as status lines name it.
    public var description: String { "\(bundleId.rawValue) (\(environment.rawValue))" }

    public static func < (lhs: ReportingScope, rhs: ReportingScope) -> Bool {
        (lhs.bundleId.rawValue, lhs.environment.rawValue) < (rhs.bundleId.rawValue, rhs.environment.rawValue)
    }
}
