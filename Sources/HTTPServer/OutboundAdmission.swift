/// How long a request for another service (`Router.Execution.outbound`) may wait for one of its threads: when
/// that service is slow for everyone, a queue behind it would hold buyers for minutes (a provider that takes its
/// full timeout answers a thread every ten seconds) and then call it for browsers long gone. Past either bound the
/// route's `busy` answer goes out instead, at once.
struct OutboundAdmission: Sendable {
    /// Requests waiting for a thread, beyond those being handled; more are answered `busy` on arrival.
    let queueLimit: Int
    /// Longest wait for a thread, in nanoseconds; one that waited longer is answered `busy` when its turn comes.
    let maxWaitNanoseconds: UInt64

    /// As many waiting as there are threads, and five seconds: a provider answering in about a second keeps up
    /// with bursts of twice the pool, and a person waits seconds, not minutes, for the retry button.
    init(threads: Int, maxWaitSeconds: UInt64 = 5) {
        queueLimit = max(1, threads)
        maxWaitNanoseconds = maxWaitSeconds * 1_000_000_000
    }

    func admits(waiting: Int) -> Bool {
        waiting < queueLimit
    }

    /// Whether a request queued at `queuedAt` (monotonic) is handled now: not after waiting too long, and not
    /// once the server is stopping (it would finish after the clients' connections are closed).
    func starts(queuedAt: UInt64, stopping: Bool) -> Bool {
        !stopping && monotonicNanoseconds() &- queuedAt <= maxWaitNanoseconds
    }
}
