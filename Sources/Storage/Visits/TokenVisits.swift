/// Every visit of one token, as SQL (migration 29): the visit that recorded the token is marked and indexed by its
/// time, which is the token's `first_seen_at` (`visits_recorded`); the token's other visits, and every visit from
/// before the migration, are unmarked and indexed by the token's id (`visits_token_later`). A read of a token's
/// visits must take both, each by its own index.
enum TokenVisits {
    /// A compound `SELECT` of `columns` from `visits` for the token whose id is `token` and first sighting
    /// `firstSeenAt` (SQL expressions: placeholders, or columns of an outer query).
    static func select(_ columns: String, token: String, firstSeenAt: String) -> String {
        """
        SELECT \(columns) FROM visits
        WHERE recorded_token = 1 AND visited_at = \(firstSeenAt) AND external_purchase_id = \(token)
        UNION ALL
        SELECT \(columns) FROM visits WHERE recorded_token IS NULL AND external_purchase_id = \(token)
        """
    }
}
