import Domain

extension TokenDays {
    /// What a run of token writes adds to `token_days`, written once at the end of the run: a batch of landings
    /// adds to the same day's row thousands of times, and one statement per day and kind does the same.
    struct Tally {
        private struct Day: Hashable {
            var day: Int64
            var environment: Environment
            var source: TokenSource
        }

        private var newTokens: [Day: Int64] = [:]
        /// New tokens and their checkouts, for the steps their checkouts took before the landing was ingested.
        private var ingestedLandings: [(ExternalPurchaseID, CheckoutID)] = []

        /// Counts a new token first seen at `firstSeenAt`.
        mutating func addToken(firstSeenAt: Int64, environment: Environment, source: TokenSource) {
            newTokens[Day(day: firstSeenAt / Milliseconds.day, environment: environment, source: source), default: 0] +=
                1
        }

        /// A landing's new token reached the tables: what its checkout did meanwhile is counted (see
        /// `addStepsTakenBeforeIngestion`).
        mutating func addIngestedLanding(externalPurchaseId: ExternalPurchaseID, checkoutId: CheckoutID) {
            ingestedLandings.append((externalPurchaseId, checkoutId))
        }

        /// Writes what was counted, in the transaction that wrote the tokens. The new tokens are added before the
        /// steps, whose rows they may create.
        func write(into connection: any SQLConnection) throws(StorageError) {
            for (key, count) in newTokens {
                try TokenDays.addTokens(
                    count,
                    day: key.day,
                    environment: key.environment,
                    source: key.source,
                    into: connection
                )
            }
            for (externalPurchaseId, checkoutId) in ingestedLandings {
                try TokenDays.addStepsTakenBeforeIngestion(
                    externalPurchaseId: externalPurchaseId,
                    checkoutId: checkoutId,
                    into: connection
                )
            }
        }
    }
}
