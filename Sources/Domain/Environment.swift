/// Apple's two environments for tokens and reports. Apple: sandbox ids begin with `SANDBOX`, and sandbox tokens
/// are reported only to the sandbox host.
public enum Environment: String, Sendable, Codable, CaseIterable {
    case production
    case sandbox
}
