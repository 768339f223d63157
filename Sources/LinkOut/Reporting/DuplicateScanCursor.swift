import Storage
import Synchronization

/// Where the planner's next window of custom-link tokens starts (`ReportStore.duplicateWindow`): kept in
/// memory, so a restart checks from the start again, which costs a few passes and loses nothing.
final class DuplicateScanCursor: Sendable {
    private let key = Mutex<CustomLinkKey?>(nil)

    /// After this key; nil is the start.
    var current: CustomLinkKey? {
        key.withLock { $0 }
    }

    func move(to next: CustomLinkKey?) {
        key.withLock { $0 = next }
    }
}
