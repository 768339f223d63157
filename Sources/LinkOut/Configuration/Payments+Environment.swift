import Payments

extension Configuration.Payments {
    /// Each provider's environment variables over its block: `LINKOUT_STRIPE_SECRET_KEY`, or for a secret
    /// `LINKOUT_STRIPE_SECRET_KEY_FILE` naming a file that holds it (the file wins, as for every secret).
    mutating func apply(environment: [String: String]) throws(ConfigurationError) {
        for registration in ProviderRegistry.all {
            for setting in registration.settings {
                guard let variable = setting.environment else { continue }
                if let value = environment[variable], !value.isEmpty { self[registration.id, setting.key] = value }
                if setting.isSecret, let path = environment[variable + "_FILE"] {
                    self[registration.id, setting.key] = try Configuration.secret(
                        fromFile: path,
                        field: variable + "_FILE"
                    )
                }
            }
        }
    }
}
