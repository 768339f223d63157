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

    /// A secret given both as itself and by the file that holds it (`LINKOUT_X` and `LINKOUT_X_FILE`, `secret` and
    /// `secretFile`): one of them was silently ignored, and a deployment that rotated the secret in one place went
    /// on with the other.
    static func bothSet(_ fileField: String, besides field: String) -> ConfigurationError {
        ConfigurationError(field: fileField, problem: "is set as well as \(field): set one of them")
    }
}
