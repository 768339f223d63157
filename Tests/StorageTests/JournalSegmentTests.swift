import Dispatch
import Domain
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import Storage

@Suite("Journal segments")
struct JournalSegmentTests {
    /// Journals a visit and waits for its completion (bounded: a hang is a failure, not a stuck test run).
    static func journal(_ ledger: Ledger, _ visit: Visit) -> StorageError? {
        let outcome = Mutex<StorageError??>(nil)
        let done = DispatchSemaphore(value: 0)
        ledger.recordVisit(visit) { error in
            outcome.withLock { $0 = .some(error) }
            done.signal()
        }
        guard done.wait(timeout: .now() + .seconds(5)) == .success, let result = outcome.withLock({ $0 }) else {
            return StorageError(.journal, "the journal did not answer within 5 s")
        }
        return result
    }

    static func segmentFiles(_ folder: String) -> [String] {
        VisitJournal.segmentPaths(in: folder).map(\.path)
    }

    /// While the tables refuse writes the journal keeps every visit, in many segments; once they take writes
    /// again each segment is deleted as soon as all its visits are applied.
    @Test func segmentsRotateAndAreDroppedOnceApplied() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try Ledger(
            directory: folder.path,
            durability: .normal,
            journalSegmentBytes: 4096
        )
        defer { ledger.close() }
        try ledger.database.limitPages(1)  // the database may not grow: ingesting fails with SQLITE_FULL
        for index in 0..<600 {
            let error = Self.journal(ledger, VisitJournalTests.visit("s-\(index)", checkout: "c-\(index)"))
            #expect(error == nil)
        }
        #expect(!ledger.flush(timeout: .milliseconds(200)))
        let failure = try #require(ledger.writeFailure)
        #expect(failure.code == .diskFull, "\(failure)")
        #expect(failure.sqliteCode == 13)  // SQLITE_FULL
        let rotated = Self.segmentFiles(folder.path)
        #expect(rotated.count > 10, "600 visits in 4 KB segments: \(rotated.count) segments")

        try ledger.database.limitPages(nil)
        #expect(ledger.flush())
        #expect(try ledger.tokens.count(.visits) == 600)
        #expect(ledger.writeFailure == nil)
        // The journal thread deletes applied segments after the ingester reports them; give it a deadline.
        let deadline = ContinuousClock.now + .seconds(5)
        while Self.segmentFiles(folder.path).count > 1 && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        let left = Self.segmentFiles(folder.path)
        #expect(left.count <= 1, "segments left: \(left)")
        let recorder = try #require(ledger.visitRecorder as? JournalVisitRecorder)
        #expect(recorder.journal.segmentBytesOnDisk <= 4096 + 1024)
    }

    /// No spare is made where it would leave the disk without its headroom: its zeros would fill a small disk
    /// for a moment, and what the ledger wrote then would be refused as on a full disk.
    @Test func noSpareIsMadeWhereItWouldFillTheDisk() throws {
        let disk = try SmallFilesystem(bytes: 4 << 20)
        defer { disk.unmount() }
        let ledger = try Ledger(directory: disk.path + "/data", journalSegmentBytes: 256 << 10)
        defer { ledger.close() }
        let recorder = try #require(ledger.visitRecorder as? JournalVisitRecorder)
        #expect(Self.journal(ledger, VisitJournalTests.visit("s-0", checkout: "t-0")) == nil)
        #expect(eventually(within: 10) { recorder.journal.spareLastTry != nil })
        #expect(recorder.journal.spareLastTry == .noRoom)
        #expect(!FileManager.default.fileExists(atPath: disk.path + "/data/" + JournalSpare.fileName))
        // The visits go on into growing segments, as before spares.
        for index in 1..<20 {
            #expect(Self.journal(ledger, VisitJournalTests.visit("s-\(index)", checkout: "t-\(index)")) == nil)
        }
    }

    /// A durable journal's segments after the first are written over zeros made ahead (`JournalSpare`), so an
    /// `fdatasync` commits no new file size: the segment is its full size before a record is in it, the records
    /// go at its front, the visits reach the tables, a replay stops at the zeros, and a close deletes the spare.
    @Test func segmentsAfterTheFirstAreWrittenOverZerosMadeAhead() throws {
        let folder = LedgerTests.TemporaryFolder()
        let segmentBytes = 16 << 10
        let ledger = try Ledger(directory: folder.path, journalSegmentBytes: segmentBytes)
        let recorder = try #require(ledger.visitRecorder as? JournalVisitRecorder)
        #expect(Self.journal(ledger, VisitJournalTests.visit("z-0", checkout: "y-0")) == nil)
        let first = try #require(Self.segmentFiles(folder.path).first)
        // Generous for a loaded machine (its zeros wait for the disk): it returns as soon as the spare is made.
        #expect(eventually(within: 30) { recorder.journal.spareIsReady }, "no spare made within 30 s")
        var index = 1
        while Self.segmentFiles(folder.path).last == first && index < 1_000 {
            #expect(Self.journal(ledger, VisitJournalTests.visit("z-\(index)", checkout: "y-\(index)")) == nil)
            index += 1
        }
        let second = try #require(Self.segmentFiles(folder.path).last)
        #expect(second != first)
        let size = try FileManager.default.attributesOfItem(atPath: second)[.size] as? Int
        #expect(size == segmentBytes, "the new segment holds one batch of records at the front of its zeros")
        let written = JournalCoding.decodeAll(Array(try Data(contentsOf: URL(fileURLWithPath: second))))
        #expect(written.map(\.visit.checkoutId.rawValue) == ["y-\(index - 1)"])
        #expect(ledger.flush())
        #expect(try ledger.tokens.count(.visits) == index)
        ledger.close()
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/" + JournalSpare.fileName))

        // A crash after two records went over a spare's zeros: the replay applies the two and reads no further.
        // Visits 0 to index - 1 took sequences 1 to index.
        let records = (index + 1...index + 2).flatMap { sequence in
            JournalCoding.encode(
                VisitJournalTests.visit("z-\(sequence)", checkout: "y-\(sequence)"),
                sequence: Int64(sequence)
            )
        }
        try Data(records + [UInt8](repeating: 0, count: segmentBytes))
            .write(to: URL(fileURLWithPath: VisitJournal.segmentPath(in: folder.path, first: Int64(index + 1))))
        let reopened = try Ledger(directory: folder.path)
        defer { reopened.close() }
        #expect(try reopened.tokens.count(.visits) == index + 2)
    }

    /// A crash leaves several segments, some of them already applied and the last one torn: reopening applies
    /// each missing visit once, in order, and deletes the segments.
    @Test func replayReadsEverySegmentExactlyOnce() throws {
        let folder = LedgerTests.TemporaryFolder()
        let first = try Ledger(directory: folder.path)
        for index in 1...2 {
            #expect(Self.journal(first, VisitJournalTests.visit("v-\(index)", checkout: "c-\(index)")) == nil)
        }
        #expect(first.flush())
        first.close()
        for path in Self.segmentFiles(folder.path) { try FileManager.default.removeItem(atPath: path) }
        // Sequences 1 and 2 are applied already; 3, 4 and 5 are not; 6 was torn by the crash.
        func record(_ sequence: Int64) -> [UInt8] {
            JournalCoding.encode(
                VisitJournalTests.visit("v-\(sequence)", checkout: "c-\(sequence)"),
                sequence: sequence
            )
        }
        try Data(record(1) + record(2) + record(3))
            .write(to: URL(fileURLWithPath: VisitJournal.segmentPath(in: folder.path, first: 1)))
        try Data(record(4) + record(5) + Array(record(6).prefix(25)))
            .write(to: URL(fileURLWithPath: VisitJournal.segmentPath(in: folder.path, first: 4)))

        let reopened = try Ledger(directory: folder.path)
        #expect(try reopened.tokens.count(.visits) == 5)
        #expect(try reopened.tokens.tokens().map(\.token.externalPurchaseId) == (1...5).map { "v-\($0)" })
        #expect(Self.segmentFiles(folder.path).isEmpty)
        reopened.close()

        let again = try Ledger(directory: folder.path)
        defer { again.close() }
        #expect(try again.tokens.count(.visits) == 5)
        // New visits take sequence numbers after every one seen, the torn one included or not.
        #expect(Self.journal(again, VisitJournalTests.visit("v-new", checkout: "c-new")) == nil)
        #expect(again.flush())
        #expect(try again.tokens.count(.visits) == 6)
        let segments = VisitJournal.segmentPaths(in: folder.path)
        #expect(segments.map(\.first) == [6])
    }
}
