import Dispatch
import Foundation
import Lifecycle
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The journal's next segment, written full of zeros and made durable on a thread of its own before it is
/// needed. Why: an `fdatasync` after an append that grew a file must also commit the file's new size through
/// the filesystem's own journal (on ext4 a second write and cache flush), where one after writing over blocks
/// the file already holds writes the data alone. Measured on the development machine with 3 KB appends, each
/// followed by `fdatasync`: 40 µs of CPU and 97-154 µs of waiting against 73-75 µs and 169-336 µs for appends that
/// grew the file. The zeros are written here, never on the landing's path; a segment needed before its spare is
/// ready (or when the disk has no room for one) grows by appends as before.
///
/// The spare is `visits.journal.spare`, not a segment's name, so a replay never reads it; a spare left by a
/// crash (perhaps half written) is written over when the next one is made, and a stop deletes it.
///
/// It is made only where the disk keeps `headroomBytes` free beside it: written on a disk with less, its zeros
/// would fill the disk for a moment, and the landings and payments written then would be refused as on a full
/// disk (a test on a 2 MB filesystem caught `/readyz` saying "disk full" after one landing).
final class JournalSpare: Sendable {
    static let fileName = "visits.journal.spare"

    private struct State {
        var ready = false
        var stopping = false
        /// How the last try to make one ended (tests).
        var lastTry: Try?
    }

    enum Try: Sendable, Equatable {
        case made, noRoom, failed
    }

    /// Free space a spare must leave beside it.
    static let headroomBytes = 64 << 20

    private let path: String
    private let bytes: Int
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    /// Set once in `init`, after every other property (the thread's body needs `self`).
    private let thread = Mutex<BackgroundThread?>(nil)

    /// Spares of `bytes` in `directory`, the first made once the first segment is taken: a ledger opened by a
    /// command that journals nothing writes none.
    init(directory: String, bytes: Int) {
        path = (directory as NSString).appendingPathComponent(Self.fileName)
        self.bytes = bytes
        let thread = BackgroundThread(name: "linkout-journal-spare") { [self] in run() }
        self.thread.withLock { $0 = thread }
    }

    /// Renames the spare to `segmentPath` when one is ready, and starts the next; false when none is ready (the
    /// caller makes an empty file instead). Under the lock, so the thread never writes a new spare over the one
    /// being renamed.
    func take(as segmentPath: String) -> Bool {
        let taken = state.withLock { state -> Bool in
            guard state.ready, !state.stopping else { return false }
            state.ready = false
            return rename(path, segmentPath) == 0
        }
        wake.signal()
        return taken
    }

    /// Whether a spare is made and waits to be taken (tests).
    var isReady: Bool { state.withLock { $0.ready } }

    /// How the last try to make one ended, nil before the first (tests).
    var lastTry: Try? { state.withLock { $0.lastTry } }

    /// Stops the thread and deletes the spare: a stopped server leaves no file it does not need in its folder.
    func stop() {
        let first = state.withLock { state in
            defer { state.stopping = true }
            return !state.stopping
        }
        guard first else { return }
        wake.signal()
        thread.withLock { $0 }?.join()
        unlink(path)
    }

    private func run() {
        while true {
            wake.wait()
            let (ready, stopping) = state.withLock { ($0.ready, $0.stopping) }
            if stopping { return }
            // A failure (a full disk) is tried again at the next segment, not in a loop.
            guard !ready else { continue }
            let outcome: Try
            let free = JournalFile.freeBytes(in: (path as NSString).deletingLastPathComponent) ?? 0
            if free < bytes + Self.headroomBytes {
                outcome = .noRoom
            } else {
                outcome = JournalFile.writeZeros(path, bytes: bytes) ? .made : .failed
            }
            state.withLock { state in
                state.ready = outcome == .made
                state.lastTry = outcome
            }
        }
    }
}
