/// A provider's configuration that cannot start: the field (`payments.stripe.secretKey`) and what is wrong. The
/// server stops before listening and exits 2 naming it.
public struct ProviderConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    public var field: String
    public var problem: String

    public init(field: String, problem: String) {
        self.field = field
        self.problem = problem
    }

    public var description: String { "\(field) \(problem)" }
}
