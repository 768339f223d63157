import Dispatch
import Domain
import Foundation
import Synchronization
import Testing

@testable import Storage

@Suite("Visit journal")
struct VisitJournalTests {
    static func visit(_ id: String?, checkout: String, at: Int64 = 1_000) -> Visit {
        LedgerTests.visit(id, checkout: checkout, at: at)
    }

    @Test func recordsRoundTripAndATornTailIsIgnored() {
        let first = JournalCoding.encode(Self.visit("a", checkout: "c-a"), sequence: 1)
        var second = Self.visit(nil, checkout: "anon", at: 7)
        second.utm = ["utm_campaign": "spring ☀︎"]
        let encodedSecond = JournalCoding.encode(second, sequence: 2)
        let third = JournalCoding.encode(Self.visit("c", checkout: "c-c"), sequence: 3)
        let records = JournalCoding.decodeAll(first + encodedSecond + Array(third.dropLast(5)))
        #expect(records.map(\.sequence) == [1, 2])
        #expect(records[0].visit.token?.token.externalPurchaseId == "a")
        #expect(records[0].visit.token == Self.visit("a", checkout: "c-a").token)
        #expect(records[1].visit.token == nil)
        #expect(records[1].visit.utm == ["utm_campaign": "spring ☀︎"])
        var damaged = first + encodedSecond
        damaged[first.count + 20] ^= 0xFF
        #expect(JournalCoding.decodeAll(damaged).map(\.sequence) == [1])
    }

    /// Earlier releases journaled the token text as received, which the ledger never stored; a record they wrote
    /// (a journal left by a crash before an upgrade) still reads, the text read and dropped. New records leave
    /// it out: every landing journals and syncs less.
    @Test func aRecordAnEarlierReleaseWroteWithTheTokenTextStillReads() throws {
        let visit = Self.visit("older", checkout: "c-older")
        let current = JournalCoding.encode(visit, sequence: 9)
        func text(_ value: String) -> [UInt8] {
            withUnsafeBytes(of: UInt32(value.utf8.count).littleEndian) { Array($0) } + Array(value.utf8)
        }
        // The payload after the length and checksum; the token begins with its mark and id.
        var payload = Array(current.dropFirst(12))
        let marked = [JournalCoding.TokenMark.fields.rawValue] + text("older")
        let start = try #require(
            payload.indices.first { payload[$0...].starts(with: marked) }
        )
        payload.replaceSubrange(
            start..<start + marked.count,
            with: [JournalCoding.TokenMark.withText.rawValue] + text("older") + text("eyJ0b2tlbiI6InRleHQifQ")
        )
        var older = withUnsafeBytes(of: UInt32(payload.count).littleEndian) { Array($0) }
        older += withUnsafeBytes(of: JournalCoding.checksum(payload).littleEndian) { Array($0) } + payload
        let records = JournalCoding.decodeAll(older + current)
        #expect(records.map(\.sequence) == [9, 9])
        #expect(records.allSatisfy { $0.visit.token == visit.token && $0.visit.checkoutId == visit.checkoutId })
        #expect(records.allSatisfy { $0.visit.utm == visit.utm && $0.visit.at == visit.at })
        #expect(older.count > current.count)
    }

    @Test func journaledVisitsReachTheTablesAndTheirCheckoutIsFoundAtOnce() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try Ledger(directory: folder.path)
        defer { ledger.close() }
        let done = Mutex<[StorageError?]>([])
        let group = DispatchGroup()
        for index in 0..<100 {
            group.enter()
            ledger.recordVisit(Self.visit("j-\(index % 10)", checkout: "c-\(index % 10)")) { error in
                done.withLock { $0.append(error) }
                group.leave()
            }
        }
        group.wait()
        #expect(done.withLock { $0.allSatisfy { $0 == nil } })
        #expect(try ledger.tokens.checkout(id: "c-3")?.externalPurchaseId == "j-3")
        #expect(ledger.flush())
        #expect(try ledger.tokens.count(.tokens) == 10)
        #expect(try ledger.tokens.count(.visits) == 100)
        #expect(try ledger.tokens.tokens().allSatisfy { $0.visitCount == 10 })
    }

    /// A process killed after acknowledging visits but before folding them into SQLite: the next open applies
    /// them from the journal, exactly once.
    @Test func reopeningReplaysWhatSQLiteHadNotSeen() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try Ledger(directory: folder.path)
        _ = try ledger.tokens.recordVisit(Self.visit("before", checkout: "c-before"))
        ledger.close()
        // Journal records the ingester never applied, plus a torn tail from the moment of the crash.
        let journal = URL(fileURLWithPath: folder.path).appendingPathComponent("visits.journal")
        var bytes = JournalCoding.encode(Self.visit("lost-1", checkout: "c-1"), sequence: 1)
        bytes += JournalCoding.encode(Self.visit("lost-2", checkout: "c-2"), sequence: 2)
        bytes += JournalCoding.encode(Self.visit("lost-1", checkout: "c-1"), sequence: 3)
        bytes += Array(JournalCoding.encode(Self.visit("torn", checkout: "c-t"), sequence: 4).prefix(30))
        try Data(bytes).write(to: journal)
        let reopened = try Ledger(directory: folder.path)
        let ids = try reopened.tokens.tokens().map(\.token.externalPurchaseId)
        #expect(Set(ids) == ["before", "lost-1", "lost-2"])
        #expect(try reopened.tokens.tokens().first { $0.token.externalPurchaseId == "lost-1" }?.visitCount == 2)
        #expect((try? Data(contentsOf: journal).count) == 0)
        reopened.close()
        // A second reopen finds nothing more to apply: no visit is counted twice.
        let again = try Ledger(directory: folder.path)
        defer { again.close() }
        #expect(try again.tokens.count(.visits) == 4)
        // New visits continue after the replayed sequence numbers.
        let stored = Mutex<StorageError?>(nil)
        let group = DispatchGroup()
        group.enter()
        again.recordVisit(Self.visit("after", checkout: "c-after")) { error in
            stored.withLock { $0 = error }
            group.leave()
        }
        group.wait()
        #expect(again.flush())
        #expect(try again.tokens.count(.visits) == 5)
    }
}

@Suite("Ledger roles")
struct LedgerRoleTests {
    @Test func oneOwnerAtATimeAndReadersLeaveTheJournalAlone() throws {
        let folder = LedgerTests.TemporaryFolder()
        let owner = try Ledger(directory: folder.path)
        #expect(throws: StorageError.self) { try Ledger(directory: folder.path) }
        let reader = try Ledger(directory: folder.path, role: .reader)
        let stored = Mutex<StorageError?>(nil)
        let group = DispatchGroup()
        group.enter()
        reader.recordVisit(VisitJournalTests.visit("r", checkout: "c-r")) { error in
            stored.withLock { $0 = error }
            group.leave()
        }
        group.wait()
        #expect(stored.withLock { $0 } != nil)
        #expect(try reader.tokens.count(.tokens) == 0)
        reader.close()
        owner.close()
        let next = try Ledger(directory: folder.path)  // the lock went with the first owner's close
        next.close()
    }
}
