import Domain
import Synchronization

/// The commission regimes in force for this process, read by every write that classifies a line item. Set once
/// at start-up (`MoneyStore.useRegimes`); none until then, so nothing is estimated before the operator picks.
final class CommissionRegimesHolder: Sendable {
    private let regimes = Mutex<[CommissionRegime]>([])

    var current: [CommissionRegime] { regimes.withLock { $0 } }

    func set(_ new: [CommissionRegime]) { regimes.withLock { $0 = new } }
}
