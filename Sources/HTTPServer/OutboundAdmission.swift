/// How long a request for another service (`Router.Execution.outbound`) may wait for one of its threads: when
/// that service is slow for everyone, a queue behind it would hold buyers for minutes (a provider that takes its
/// full timeout answers a thread every ten seconds) and then call it for browsers long gone. Past either bound the
/// route's `busy` answer goes out instead, at once.
struct OutboundAdmission: Sendable {
    /// Requests waiting for a thread, beyond those being handled; more are answered `busy` on arrival.
    let queueLimit: Int
    /// Longest wait for a thread, in nanoseconds; one that waited longer is answered `busy` when its turn comes.
    let maxWaitNanoseconds: UInt64

    /// Four times as many waiting as there are threads, and five seconds: a provider answering within a second
    /// takes a burst of five times the pool, and behind one that does not answer a person waits for a thread to
    /// give up on it (its timeout, 10 s for Stripe's two attempts), not for the whole queue.
    init(threads: Int, maxWaitSeconds: UInt64 = 5) {
        queueLimit = 4 * max(1, threads)
        maxWaitNanoseconds = maxWaitSeconds * 1_000_000_000
    }

    /// Whether a request queued at `queuedAt` (monotonic) is handled now: not after waiting too long, and not
    /// once the server is stopping (it would finish after the clients' connections are closed).
    func starts(queuedAt: UInt64, stopping: Bool) -> Bool {
        !stopping && monotonicNanoseconds() &- queuedAt <= maxWaitNanoseconds
    }
}
