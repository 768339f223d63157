extension Configuration {
    /// `reporting` section.
    package struct Reporting: Sendable {
        /// A token without line items is reported `NO_LINE_ITEM` this many seconds after its `tokenCreationDate`.
        /// Default 48 hours, well before Apple's `UNREPORTED` notice 10 days after creation; at most 7 days, so an
        /// open payment's hold (a day at most) and retries still fit before it.
        package var noLineItemAfterSeconds: Int64 = 172_800
        /// How often the reporting service looks for due reports (it is also woken by new line items).
        package var pollIntervalSeconds: Int64 = 30
        /// Total time allowed for one call to Apple. Default 15.
        package var requestTimeoutSeconds: Int64 = 15
        /// Reports sent at once (one per token at most). A hanging call holds one sender, not all. Default 16.
        package var concurrency: Int64 = 16

        package init() {}

        static func read(_ section: JSONFields) throws(ConfigurationError) -> Reporting {
            try section.rejectUnknownKeys([
                "noLineItemAfterSeconds", "pollIntervalSeconds", "requestTimeoutSeconds", "concurrency",
            ])
            var reporting = Reporting()
            reporting.requestTimeoutSeconds = try section.integer(
                "requestTimeoutSeconds",
                default: reporting.requestTimeoutSeconds,
                range: 1...300
            )
            reporting.noLineItemAfterSeconds = try section.integer(
                "noLineItemAfterSeconds",
                default: reporting.noLineItemAfterSeconds,
                range: 0...604_800
            )
            reporting.pollIntervalSeconds = try section.integer(
                "pollIntervalSeconds",
                default: reporting.pollIntervalSeconds,
                range: 1...3600
            )
            reporting.concurrency = try section.integer("concurrency", default: reporting.concurrency, range: 1...64)
            return reporting
        }
    }
}
