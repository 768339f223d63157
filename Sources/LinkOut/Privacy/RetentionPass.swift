import Domain
import Lifecycle
import Logging
import Storage
import Synchronization

/// `retention.personalDataDays`: once an hour, stored provider and entitlement events older than that lose a
/// person's data (`PersonalData`), in batches; what was acted on is never changed before it was acted on. Each
/// pass that erases something records so before its first change and what it changed once done.
final class RetentionPass: BackgroundService {
    let ledger: Ledger
    let days: Int64
    let trail: AuditTrail
    let logger: Logger
    let clock: Clock
    private let worker: PeriodicWorker
    /// Rewritten bodies whose old copies the ledger's file may still hold: the WAL is yet to be folded in.
    private let foldPending = Mutex(false)

    static let intervalMilliseconds = Milliseconds.hour
    static let batch = 500
    /// Most batches per pass: a first pass over years of events spreads over several hours.
    static let batchesPerPass = 40

    init(ledger: Ledger, days: Int64, trail: AuditTrail, logger: Logger, clock: Clock) {
        self.ledger = ledger
        self.days = days
        self.trail = trail
        self.logger = logger
        self.clock = clock
        worker = PeriodicWorker(clock: clock)
    }

    func start() {
        worker.start(name: "linkout-retention", intervalMilliseconds: Self.intervalMilliseconds) { [self] in pass() }
    }

    func stop() { worker.stop() }

    /// The ledger zeroes the pages it frees (`secure_delete = ON`); those a release before 0.35.0 freed may
    /// still hold a body's earlier copy (`PrivacyStore.zeroFreePages`). Zeroed by a pass until that is done once,
    /// and never again: each later page is zeroed as it is freed. A server killed while it zeroes does it again
    /// at its next pass (and a zeroing cut short is finished at start).
    private func zeroFreePagesOnce() throws {
        guard try ledger.settings.setting(named: Self.freePagesZeroed) == nil else { return }
        let zeroed = try ledger.privacy.zeroFreePages()
        try ledger.settings.setSetting(named: Self.freePagesZeroed, to: String(clock.nowMilliseconds()))
        logger.info("free pages zeroed once", ["pages": String(zeroed)])
    }

    static let freePagesZeroed = "free_pages_zeroed_at"

    /// One pass; returns how many bodies it rewrote.
    @discardableResult
    func pass() -> Int {
        let now = clock.nowMilliseconds()
        let cutoff = now - Milliseconds.days(days)
        var rewritten = 0
        do {
            for batch in 0..<Self.batchesPerPass {
                let bodies = try ledger.privacy.bodies(receivedBefore: cutoff, limit: Self.batch)
                guard !bodies.isEmpty else { break }
                // Recorded before the first rewrite, as every batch commits on its own: a server killed in the
                // middle of a pass had rewritten people's data with no entry saying so. An entry that cannot be
                // written ends the pass before it changes anything.
                if batch == 0 {
                    try ledger.audit.append(
                        AuditEntry(
                            at: now,
                            actor: "linkout",
                            origin: "retention",
                            action: "privacy.retention_started",
                            after: "stored bodies older than \(days) days to be rewritten"
                        )
                    )
                }
                // A body that is not JSON is marked done as it is: there is nothing of a person to find in it.
                // Only bodies still undone are written: another instance on the same database may be at it too.
                rewritten += try ledger.privacy.replace(
                    bodies.map { StoredBody(kind: $0.kind, body: PersonalData.redact($0.body) ?? $0.body) },
                    at: now,
                    onlyOnce: true
                )
            }
        } catch {
            logger.error("retention pass failed", ["error": "\(error)"])
        }
        // Recorded before the zeroing, which may take a while: a server killed meanwhile lost the entry.
        if rewritten > 0 {
            trail.append(
                AuditEntry(
                    at: now,
                    actor: "linkout",
                    origin: "retention",
                    action: "privacy.retention",
                    after: "\(rewritten) stored bodies older than \(days) days rewritten"
                )
            )
            foldPending.withLock { $0 = true }
        }
        // The rewritten pages are in the WAL, and the file keeps the bodies as they were until a checkpoint copies
        // them over, which a quiet ledger may not reach for weeks: folded, as `linkout erase` does; one a reader
        // held is folded by the next pass.
        if foldPending.withLock({ $0 }) {
            let folded = ledger.privacy.foldWAL()
            foldPending.withLock { $0 = !folded }
            if !folded {
                logger.warning("the WAL could not be folded into the ledger after rewriting; the next pass tries again")
            }
        }
        do {
            try zeroFreePagesOnce()
        } catch {
            logger.error("free pages could not be zeroed", ["error": "\(error)"])
        }
        return rewritten
    }
}
