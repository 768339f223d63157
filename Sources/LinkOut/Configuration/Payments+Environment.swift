import Payments

extension Configuration.Payments {
    /// Each provider's environment variables over its block: `LINKOUT_STRIPE_SECRET_KEY`, or for a secret
    /// `LINKOUT_STRIPE_SECRET_KEY_FILE` naming a file that holds it (not both, as for every secret).
    mutating func apply(environment: [String: String], unreadSecretFiles: inout [ConfigurationError])
        throws(ConfigurationError)
    {
        for registration in ProviderRegistry.all {
            for setting in registration.settings {
                guard let variable = setting.environment else { continue }
                let value =
                    setting.isSecret
                    ? try Configuration.secret(variable, in: environment, unreadFiles: &unreadSecretFiles)
                    : environment[variable]
                if let value, !value.isEmpty { self[registration.id, setting.key] = value }
            }
        }
    }
}
