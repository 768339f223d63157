/// Which payment provider took a payment: the name under which a provider registers, stored with every payment
/// session, event and purchase, and the `{provider}` of its webhook route.
///
/// An open set, not an enum: a provider is a plug-in, so adding one must not touch the types every layer
/// shares. Each provider declares its own id beside its code.
public struct ProviderID: Identifier {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
}
