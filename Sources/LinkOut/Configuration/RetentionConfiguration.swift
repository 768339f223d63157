extension Configuration {
    /// `retention`: how long a person's data is kept in stored bodies.
    package struct Retention: Sendable {
        /// Days after which the retention pass takes a person's data (e-mail, names, address lines, phone, account
        /// tokens) out of stored provider and entitlement events. Nil (the default): kept. 1 to 3650.
        package var personalDataDays: Int64?

        package init() {}

        static func read(_ section: JSONFields) throws(ConfigurationError) -> Retention {
            try section.rejectUnknownKeys(["personalDataDays"])
            var read = Retention()
            read.personalDataDays = try section.optionalInteger("personalDataDays", range: 1...3650)
            return read
        }
    }
}
