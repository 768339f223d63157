import Lifecycle
import Logging
import Storage

extension Ledger {
    /// `bringForwardAfterClockStep`, said in the log when it brought anything forward; a failure is logged and
    /// the pass goes on (the next look after another step, or the next start, tries again).
    func bringOutboxesForward(clock: Clock, logger: Logger) {
        do {
            let rows = try bringForwardAfterClockStep(clock: clock)
            if rows > 0 {
                logger.warning(
                    "outbox retries set by a clock that ran ahead are due now (the wall clock stepped back)",
                    ["rows": String(rows)]
                )
            }
        } catch {
            logger.error("outbox retries set ahead could not be brought forward", ["error": "\(error)"])
        }
    }
}
