import ExternalPurchase
import Storage

/// Apple's 429 holds every report back until the moment it names (at least `AppleAnswer.rateLimitPause`). The
/// moment is kept in the ledger: a restart within the pause (a deploy, a crash loop) must not send at once what
/// Apple asked us to hold, and another instance on the same database starts paused too (the limit is the
/// account's, not the instance's).
enum ReportingPause {
    static let setting = "reporting_paused_until"

    /// The pause kept in the ledger while it is still to come at `now`, never further than Apple's longest wait
    /// we honour (`RetryAfter.longestWaitMilliseconds`; a clock stepped back must not stretch it); nil when there
    /// is none.
    static func stored(in ledger: Ledger, now: Int64) throws(StorageError) -> Int64? {
        guard let until = try ledger.settings.setting(named: setting).flatMap({ Int64($0) }), until > now else {
            return nil
        }
        return min(until, now + RetryAfter.longestWaitMilliseconds)
    }

    static func store(_ until: Int64, in ledger: Ledger) throws(StorageError) {
        try ledger.settings.setSetting(named: setting, to: String(until))
    }
}
