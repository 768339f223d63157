import Storage

/// What this build is: the release (raised with every release, and whenever the schema changes) and the schema
/// version it migrates ledgers to. `linkout version`, `linkout --version` and `linkout_build_info` print them.
package enum Release {
    package static let version = "0.39.0"
    package static var schemaVersion: Int64 { Ledger.schemaVersion }

    /// `linkout 0.29.0 (schema 29)`.
    package static var summary: String { "linkout \(version) (schema \(schemaVersion))" }
}
