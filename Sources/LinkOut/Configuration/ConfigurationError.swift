/// A configuration problem that stops start-up (exit code 2), naming the field and what is wrong with it.
package struct ConfigurationError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The dotted path of the field, e.g. `server.port`, or the file or flag concerned.
    package var field: String
    package var problem: String

    package init(field: String, problem: String) {
        self.field = field
        self.problem = problem
    }

    package var description: String { "invalid configuration: \(field): \(problem)" }
}
