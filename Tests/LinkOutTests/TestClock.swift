import Lifecycle
import Synchronization

/// The system clock plus an offset the test moves: retries and expiries come due without sleeping.
final class TestClock: Sendable {
    private let offset = Atomic<Int64>(0)

    var clock: Clock {
        Clock { [self] in Clock.system.nowMilliseconds() + offset.load(ordering: .relaxed) }
    }

    func advance(seconds: Int64) {
        offset.add(seconds * 1000, ordering: .relaxed)
    }
}
