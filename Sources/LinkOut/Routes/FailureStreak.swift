import Synchronization

/// The log of one kind of failure that can hit every request for minutes (a full disk refusing every landing): a
/// line when it starts, one a minute while it lasts with how many failed since, and one when it ends. A line per
/// request was thousands a second, enough to fill the log's disk too, and no line said it was over.
final class FailureStreak: Sendable {
    struct Line: Equatable {
        enum Kind: Equatable { case started, continuing, ended }
        var kind: Kind
        /// Failures since the previous line (for `ended`, over the whole streak).
        var failures: Int
        /// How long the streak has lasted, in seconds.
        var seconds: Int
    }

    private struct State {
        var startedAt: UInt64 = 0
        var lastLineAt: UInt64 = 0
        var sinceLine = 0
        var total = 0
    }

    /// Read first by every success: a landing that succeeds while nothing failed takes no lock.
    private let failing = Atomic<Bool>(false)
    private let state = Mutex(State())
    static let interval: UInt64 = 60_000_000_000

    /// Counts a failure at `now` (monotonic nanoseconds); the line to log, if one is due.
    func failed(now: UInt64) -> Line? {
        state.withLock { state in
            if !failing.load(ordering: .relaxed) {
                failing.store(true, ordering: .relaxed)
                state = State(startedAt: now, lastLineAt: now, sinceLine: 0, total: 1)
                return Line(kind: .started, failures: 1, seconds: 0)
            }
            state.total += 1
            state.sinceLine += 1
            guard now &- state.lastLineAt >= Self.interval else { return nil }
            defer { (state.lastLineAt, state.sinceLine) = (now, 0) }
            return Line(kind: .continuing, failures: state.sinceLine, seconds: Self.seconds(now &- state.startedAt))
        }
    }

    /// Counts a success at `now`; the line that ends a streak, if one was under way.
    func succeeded(now: UInt64) -> Line? {
        guard failing.load(ordering: .relaxed) else { return nil }
        return state.withLock { state in
            guard failing.load(ordering: .relaxed) else { return nil }
            failing.store(false, ordering: .relaxed)
            return Line(kind: .ended, failures: state.total, seconds: Self.seconds(now &- state.startedAt))
        }
    }

    private static func seconds(_ nanoseconds: UInt64) -> Int { Int(nanoseconds / 1_000_000_000) }
}
