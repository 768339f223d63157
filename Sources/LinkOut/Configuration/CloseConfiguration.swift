extension Configuration {
    /// `close`: the monthly close (tokens created in a UTC month and line items dated in it, all accepted by
    /// Apple).
    package struct Close: Sendable {
        /// The day of the next month by whose start (00:00 UTC) month M should be closed. Default 15: Apple invoices
        /// the commission after each month, and third-party notes speak of reports "within 15 days of month end" (not
        /// confirmed: Apple's API pages defer the deadline to its EU support page; docs/apple-facts.md, "Deadlines
        /// and unreported tokens"). 1 to 28, so every month has the day.
        package var deadlineDay: Int64 = 15
        /// How long before the deadline a month still outstanding is warned about (log, metric, `/readyz`).
        package static let warningDays: Int64 = 5

        package init() {}

        static func read(_ section: JSONFields) throws(ConfigurationError) -> Close {
            try section.rejectUnknownKeys(["deadlineDay"])
            var close = Close()
            close.deadlineDay = try section.integer("deadlineDay", default: close.deadlineDay, range: 1...28)
            return close
        }
    }
}
