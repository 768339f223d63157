/// A configuration problem that stops start-up (exit code 2), naming the field and what is wrong with it.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The dotted path of the field, e.g. `server.port`, or the file or flag concerned.
    public var field: String
    public var problem: String

    public init(field: String, problem: String) {
        self.field = field
        self.problem = problem
    }

    public var description: String { "invalid configuration: \(field): \(problem)" }
}
