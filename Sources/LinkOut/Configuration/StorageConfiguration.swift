extension Configuration {
    /// `storage` section.
    package struct Storage: Sendable {
        /// Where the SQLite ledger lives (`LINKOUT_DATA_DIR`, `--data-dir`). Default `data`.
        package var dataDir = "data"
        /// `full` (fsync every commit; survives power loss) or `normal` (survives a killed process). Default full.
        package var durability = "full"

        package init() {}

        static func read(_ section: JSONFields) throws(ConfigurationError) -> Storage {
            try section.rejectUnknownKeys(["dataDir", "durability"])
            var storage = Storage()
            storage.dataDir = try section.string("dataDir", default: storage.dataDir)
            storage.durability = try section.string("durability", default: storage.durability)
            guard ["full", "normal"].contains(storage.durability) else {
                throw ConfigurationError(field: "storage.durability", problem: "must be full or normal")
            }
            return storage
        }
    }
}
