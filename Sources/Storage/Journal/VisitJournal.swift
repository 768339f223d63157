import Dispatch
import Foundation
import Lifecycle
import Synchronization

/// The landing path's durable write: append-only segment files where each batch of visits is one `write(2)` and
/// one `fdatasync(2)`. A visit is acknowledged once its batch is on disk; the ledger's ingester then folds it
/// into the tables in large transactions, and replays whatever it had not folded in when the process died.
///
/// Why: a SQLite commit rewrites every b-tree page a batch touches (random keys touch many), so small frequent
/// commits cost far more than one sequential append of the same visits.
///
/// The journal is a run of segments, `visits.journal.<first sequence>`. The active one takes appends until it
/// reaches `segmentBytes`, then a new one starts; a segment is deleted once the ingester has applied every
/// record in it. So the journal holds what is not yet in the tables plus at most one segment, even during a
/// flood, and the next segment made ahead (`JournalSpare`). `visits.journal` itself holds the folder's lock (and,
/// from older versions, records to replay).
final class VisitJournal: Sendable {
    typealias Completion = @Sendable (StorageError?) -> Void

    private struct Pending {
        var record: [UInt8]
        var sequence: Int64
        var visit: Visit
        var completion: Completion
    }

    private struct State {
        var pending: [Pending] = []
        var nextSequence: Int64
        var stopping = false
        /// Highest sequence the ingester has committed to the tables.
        var applied: Int64
        /// Highest sequence on disk, and highest whose batch is done with (written or failed).
        var written: Int64
        var processed: Int64
    }

    /// A segment file and the sequences written to it (`last < first` while it holds none).
    private struct Segment {
        let first: Int64
        var last: Int64
        let file: JournalFile
    }

    /// Where the journal thread writes; only that thread touches it (the Mutex makes the class Sendable).
    private struct Files {
        var segments: [Segment] = []
        /// Whether the last segment takes appends (false after a failure that could not be cut back).
        var activeIsOpen = false
    }

    /// Under load, at most one sync per interval: the landings that arrive meanwhile join its batch. A sync costs
    /// about the same for 3 visits as for 30, and at full speed they came every ~150 µs with 3 or 4 visits each
    /// (a tenth of a landing's CPU, in system time). The first landing after a quiet spell is written at once;
    /// under load a landing waits at most this much more, far below its p99.
    static let syncInterval = Duration.milliseconds(1)

    static let defaultSegmentBytes = 8 << 20
    static let lockFileName = "visits.journal"
    private static let segmentPrefix = "visits.journal."

    private let directory: String
    private let lockFile: JournalFile
    private let durable: Bool
    private let segmentBytes: Int
    private let state: Mutex<State>
    private let files = Mutex(Files())
    /// The next segment, made ahead (a journal that never syncs gains nothing from one).
    private let spare: JournalSpare?
    private let available = DispatchSemaphore(value: 0)
    private let onDurable: @Sendable ([JournalRecord]) -> Void
    /// Set once in `init`, after every other property (the thread's body needs `self`).
    private let thread = Mutex<BackgroundThread?>(nil)

    /// Starts after a replay: no segment files exist and `nextSequence` follows every sequence ever used.
    /// `onDurable` receives each batch once it is on disk and acknowledged (the ingester's queue); while it has
    /// not returned, the next batch waits.
    init(
        directory: String,
        lockFile: JournalFile,
        nextSequence: Int64,
        durable: Bool,
        segmentBytes: Int,
        onDurable: @escaping @Sendable ([JournalRecord]) -> Void
    ) {
        self.directory = directory
        self.lockFile = lockFile
        self.durable = durable
        self.segmentBytes = segmentBytes
        self.onDurable = onDurable
        spare = durable ? JournalSpare(directory: directory, bytes: segmentBytes) : nil
        state = Mutex(
            State(
                nextSequence: nextSequence,
                applied: nextSequence - 1,
                written: nextSequence - 1,
                processed: nextSequence - 1
            )
        )
        let thread = BackgroundThread(name: "linkout-journal") { [self] in run() }
        self.thread.withLock { $0 = thread }
    }

    /// The segment files in `directory`, oldest first.
    static func segmentPaths(in directory: String) -> [(first: Int64, path: String)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.compactMap { name -> (Int64, String)? in
            guard name.hasPrefix(segmentPrefix), let first = Int64(name.dropFirst(segmentPrefix.count)) else {
                return nil
            }
            return (first, (directory as NSString).appendingPathComponent(name))
        }.sorted { $0.0 < $1.0 }
    }

    /// The records from sequence `first` through `last` (at most `limit`), read from this journal's segments:
    /// what the ingester let go of from memory. The segments are the journal's own list (an unlisted file in the
    /// folder is no segment), and those holding unapplied records are not deleted while they are read.
    func readBack(from first: Int64, through last: Int64, limit: Int) -> [JournalRecord] {
        let segments = files.withLock { files in
            files.segments.filter { $0.last >= first && $0.first <= last }.map(\.file)
        }
        var records: [JournalRecord] = []
        for file in segments where records.count < limit {
            guard let bytes = try? file.readAll() else { break }
            let wanted = JournalCoding.decodeAll(bytes).lazy.filter { $0.sequence >= first && $0.sequence <= last }
            records += wanted.prefix(limit - records.count)
        }
        return records
    }

    /// The path of the segment whose first record is `first` (zero-padded, so names sort like numbers).
    static func segmentPath(in directory: String, first: Int64) -> String {
        let digits = String(first)
        let name = segmentPrefix + String(repeating: "0", count: max(0, 19 - digits.count)) + digits
        return (directory as NSString).appendingPathComponent(name)
    }

    /// Queues a visit; `completion` runs once it is on disk (or with the error that kept it off).
    func append(_ visit: Visit, completion: @escaping Completion) {
        // Nil when refused, else whether the visit starts the next batch.
        let startsBatch = state.withLock { state -> Bool? in
            guard !state.stopping else { return nil }
            let sequence = state.nextSequence
            state.nextSequence += 1
            state.pending.append(
                Pending(
                    record: JournalCoding.encode(visit, sequence: sequence),
                    sequence: sequence,
                    visit: visit,
                    completion: completion
                )
            )
            return state.pending.count == 1
        }
        guard let startsBatch else {
            completion(StorageError(.closed, "the ledger is closed"))
            return
        }
        // Only the first visit of a batch wakes the thread: it takes every visit queued by then.
        if startsBatch { available.signal() }
    }

    /// The sequence of the last visit appended (written or about to be).
    var lastAssigned: Int64 { state.withLock { $0.nextSequence - 1 } }

    /// Once every visit up to `sequence` is written or failed: the highest one on disk (what the ingester must
    /// reach). Nil while some are still queued.
    func written(through sequence: Int64) -> Int64? {
        state.withLock { $0.processed >= sequence ? $0.written : nil }
    }

    /// The ingester committed everything up to `sequence` to the tables; segments it completes can go.
    func markApplied(_ sequence: Int64) {
        state.withLock { $0.applied = max($0.applied, sequence) }
        available.signal()
    }

    /// Whether the next segment is made ahead and waits (tests).
    var spareIsReady: Bool { spare?.isReady ?? false }

    /// How the last try to make a spare ended (tests).
    var spareLastTry: JournalSpare.Try? { spare?.lastTry }

    /// Bytes in segment files now (tests and status).
    var segmentBytesOnDisk: Int { files.withLock { $0.segments.reduce(0) { $0 + $1.file.size } } }

    /// Writes what is queued, then stops. Segments not yet applied stay for the next open to replay.
    func stop() {
        let first = state.withLock { state in
            defer { state.stopping = true }
            return !state.stopping
        }
        guard first else { return }
        available.signal()
        thread.withLock { $0 }?.join()
        spare?.stop()
    }

    /// Gives the folder's lock back, once nothing writes the tables from this journal any more.
    func releaseLock() {
        lockFile.unlock()
    }

    private func run() {
        var lastSync = ContinuousClock.now - Self.syncInterval
        while true {
            available.wait()
            if durable { Self.sleep(until: lastSync + Self.syncInterval) }
            let (batch, stopping) = state.withLock { state in
                defer { state.pending.removeAll(keepingCapacity: true) }
                return (state.pending, state.stopping)
            }
            if !batch.isEmpty {
                lastSync = .now
                write(batch)
            }
            dropApplied()
            if stopping && state.withLock({ $0.pending.isEmpty }) { return }
        }
    }

    private static func sleep(until instant: ContinuousClock.Instant) {
        let left = instant - .now
        guard left > .zero else { return }
        let (seconds, attoseconds) = left.components
        Thread.sleep(forTimeInterval: TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18)
    }

    private func write(_ batch: [Pending]) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(batch.reduce(0) { $0 + $1.record.count })
        for pending in batch { bytes.append(contentsOf: pending.record) }
        let first = batch.first?.sequence ?? 0
        let last = batch.last?.sequence ?? 0
        let failure = files.withLock { files -> StorageError? in
            let file: JournalFile
            do throws(StorageError) {
                file = try activeSegment(&files, startingAt: first)
            } catch {
                return error
            }
            let start = file.size
            do throws(StorageError) {
                try file.append(bytes)
                if durable { try file.sync() }
            } catch {
                // Not acknowledged, so not kept: cut the batch back off, or later records would sit behind a torn
                // one, which ends a replay. If even that fails, the segment takes no more appends.
                do throws(StorageError) { try file.truncate(to: start) } catch { files.activeIsOpen = false }
                return error
            }
            files.segments[files.segments.count - 1].last = last
            return nil
        }
        state.withLock { state in
            if failure == nil { state.written = last }
            state.processed = last
        }
        // Acknowledged first: these visits are on disk. Handing them on may wait for the ingester to make room
        // (its back-pressure), and then it is the next batch's landings that wait, not these.
        for pending in batch { pending.completion(failure) }
        if failure == nil { onDurable(batch.map { ($0.sequence, $0.visit) }) }
    }

    /// The segment to append to: the open one while it is under `segmentBytes`, else a new one named for `first`.
    /// When a new one cannot be created, a full segment takes the batch anyway (bounded journal size matters
    /// less than recording the visit).
    private func activeSegment(_ files: inout Files, startingAt first: Int64) throws(StorageError) -> JournalFile {
        if files.activeIsOpen, let active = files.segments.last, active.file.size < segmentBytes {
            return active.file
        }
        do throws(StorageError) {
            let path = Self.segmentPath(in: directory, first: first)
            let tookSpare = spare?.take(as: path) == true
            let file: JournalFile
            do throws(StorageError) {
                file = try JournalFile(path: path, recordsEndAt: tookSpare ? 0 : nil)
            } catch {
                // The spare renamed but not opened (no descriptor left): 8 MiB of zeros under a segment's name
                // stayed until a restart, one more at each try.
                if tookSpare { unlink(path) }
                throw error
            }
            if durable {
                do throws(StorageError) {
                    try JournalFile.syncDirectory(directory)
                } catch {
                    // Not a segment after all: an empty file left behind would be replayed as one.
                    file.remove()
                    throw error
                }
            }
            files.segments.append(Segment(first: first, last: first - 1, file: file))
            files.activeIsOpen = true
            return file
        } catch {
            guard files.activeIsOpen, let active = files.segments.last else { throw error }
            return active.file
        }
    }

    /// Deletes segments whose records are all in the tables. The open segment goes too once it is full, so an
    /// idle journal keeps less than one segment (and the spare made ahead).
    private func dropApplied() {
        let applied = state.withLock { $0.applied }
        files.withLock { files in
            let lastIndex = files.segments.count - 1
            var kept: [Segment] = []
            for (index, segment) in files.segments.enumerated() {
                let isOpen = index == lastIndex && files.activeIsOpen
                let done = segment.last <= applied && (!isOpen || segment.file.size >= segmentBytes)
                if done {
                    segment.file.remove()
                    if isOpen { files.activeIsOpen = false }
                } else {
                    kept.append(segment)
                }
            }
            files.segments = kept
        }
    }
}
