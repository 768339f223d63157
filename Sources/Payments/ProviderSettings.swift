public import Domain
import Foundation
import Outbound

/// A provider's configuration as the operator wrote it: `payments.<id>` with environment variables and secret
/// files applied, every value as text (`true`, `300`; an object of strings as `<key>.<name>`, read with `map`). The provider reads it when it is made, and each read
/// names the field when a value is missing or wrong.
public struct ProviderSettings: Sendable, Equatable {
    public let provider: ProviderID
    public let declared: [ProviderSetting]
    public var values: [String: String]

    public init(provider: ProviderID, declared: [ProviderSetting], values: [String: String] = [:]) {
        self.provider = provider
        self.declared = declared
        self.values = values
    }

    public subscript(key: String) -> String? {
        get { values[key] }
        set { values[key] = newValue }
    }

    /// `payments.<id>.<key>`.
    public func field(_ key: String) -> String { "payments.\(provider.rawValue).\(key)" }

    public func string(_ key: String, default fallback: String) -> String {
        guard let value = values[key], !value.isEmpty else { return fallback }
        return value
    }

    /// A value the provider cannot start without: missing or empty names the field and where else it can come
    /// from ("is required with provider stripe (or LINKOUT_STRIPE_SECRET_KEY, or secretKeyFile)").
    public func required(_ key: String) throws(ProviderConfigurationError) -> String {
        let setting = declared.first { $0.key == key }
        if let value = values[key], !value.isEmpty {
            // A key pasted with a space or a line break in it started the server and failed every call (the
            // offline check passed it): a provider's keys and secrets are visible ASCII.
            guard setting?.isSecret != true || VisibleASCII.holds(value) else {
                throw ProviderConfigurationError(
                    field: field(key),
                    problem: "must be the provider's key as it gives it, without spaces, line breaks or other "
                        + "invisible characters"
                )
            }
            return value
        }
        let elsewhere = [setting?.environment, setting?.fileKey].compactMap { $0 }
        let hint = elsewhere.isEmpty ? "" : " (or " + elsewhere.joined(separator: ", or ") + ")"
        throw ProviderConfigurationError(
            field: field(key),
            problem: "is required with provider \(provider.rawValue)\(hint)"
        )
    }

    public func bool(_ key: String, default fallback: Bool) throws(ProviderConfigurationError) -> Bool {
        switch values[key] {
        case nil, "": return fallback
        case "true": return true
        case "false": return false
        default: throw ProviderConfigurationError(field: field(key), problem: "must be true or false")
        }
    }

    public func integer(_ key: String, default fallback: Int64, range: ClosedRange<Int64>)
        throws(ProviderConfigurationError) -> Int64
    {
        guard let text = values[key], !text.isEmpty else { return fallback }
        guard let value = Int64(text), range.contains(value) else {
            throw ProviderConfigurationError(
                field: field(key),
                problem: "must be a whole number from \(range.lowerBound) to \(range.upperBound)"
            )
        }
        return value
    }

    /// An `http://` or `https://` URL (a provider's API host; tests point it at a fake).
    public func httpURL(_ key: String, default fallback: String) throws(ProviderConfigurationError) -> String {
        let value = string(key, default: fallback)
        guard OutboundURL.isValid(value) else {
            throw ProviderConfigurationError(
                field: field(key),
                problem: "must be an absolute http or https URL, written in visible ASCII"
            )
        }
        return value
    }

    /// A key whose value is an object of strings in the block (`"prices": {"pro.lifetime": "pri_…"}`), by name.
    public func map(_ key: String) -> [String: String] {
        var map: [String: String] = [:]
        for (name, value) in values where name.hasPrefix(key + ".") {
            map[String(name.dropFirst(key.count + 1))] = value
        }
        return map
    }

    /// An optional value; nil when absent or empty.
    public func optional(_ key: String) -> String? {
        guard let value = values[key], !value.isEmpty else { return nil }
        return value
    }
}
