import Dispatch
import Foundation
import Testing

@testable import Storage

#if canImport(Glibc)
import Glibc
#endif

@Suite("Full disk")
struct DiskFullTests {
    /// A size-limited tmpfs, mounted for one test. Mounting needs root (CAP_SYS_ADMIN); without it the test
    /// fails and says so, because a skipped test would hide that the full-disk path went unchecked.
    final class SmallFilesystem {
        struct Failure: Error, CustomStringConvertible {
            var description: String
        }

        let path: String

        init(bytes: Int) throws {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-tmpfs-\(UUID())").path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            guard mount("tmpfs", path, "tmpfs", 0, "size=\(bytes),mode=0700") == 0 else {
                let reason = String(cString: strerror(errno))
                rmdir(path)
                throw Failure(description: "cannot mount a \(bytes)-byte tmpfs on \(path): \(reason); run as root")
            }
        }

        /// Unmounts (lazily if something still holds a file there) and removes the mount point.
        func unmount() {
            if umount2(path, 0) != 0 { umount2(path, Int32(MNT_DETACH)) }
            rmdir(path)
        }

        /// Writes a file until the filesystem is full; returns its path.
        func fill() throws -> String {
            let filler = path + "/filler"
            let fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw Failure(description: "cannot create \(filler)") }
            defer { close(fd) }
            for chunk in [65_536, 4_096, 512, 64, 1] {
                let bytes = [UInt8](repeating: 0x55, count: chunk)
                // Each size is written until the disk refuses it; a 2 MB disk bounds every loop.
                while bytes.withUnsafeBytes({ write(fd, $0.baseAddress, chunk) }) == chunk {}
            }
            guard errno == ENOSPC else {
                throw Failure(description: "filling \(filler) stopped with \(String(cString: strerror(errno)))")
            }
            return filler
        }
    }

    /// On a full disk a landing gets `.diskFull` at once and `writeFailure` says why; every visit acknowledged
    /// before is kept; when space returns the next visit is recorded without reopening anything.
    @Test func aFullDiskFailsLandingsQuicklyKeepsWhatWasAcknowledgedAndRecovers() throws {
        let disk = try SmallFilesystem(bytes: 2 << 20)
        defer { disk.unmount() }
        let ledger = try Ledger(directory: disk.path + "/data", journalSegmentBytes: 16 << 10)
        defer { ledger.close() }
        var acknowledged = 0
        for index in 0..<50 {
            let error = JournalSegmentTests.journal(
                ledger,
                VisitJournalTests.visit("a-\(index)", checkout: "c-\(index)")
            )
            #expect(error == nil)
            if error == nil { acknowledged += 1 }
        }
        #expect(ledger.flush())
        #expect(ledger.writeFailure == nil)

        let filler = try disk.fill()
        // The last free bytes may still take a few records; the disk refuses one soon after.
        var refusal: StorageError?
        var refusedCheckout = ""
        var slowest = Duration.zero
        for index in 0..<2_000 {
            let started = ContinuousClock.now
            let error = JournalSegmentTests.journal(
                ledger,
                VisitJournalTests.visit("f-\(index)", checkout: "d-\(index)")
            )
            slowest = max(slowest, ContinuousClock.now - started)
            guard let error else {
                acknowledged += 1
                continue
            }
            refusal = error
            refusedCheckout = "d-\(index)"
            break
        }
        let error = try #require(refusal, "the full disk took 2,000 visits")
        #expect(error.code == .diskFull, "\(error)")
        #expect(error.systemError == ENOSPC)
        #expect(slowest < .seconds(1), "a visit took \(slowest)")
        #expect(ledger.writeFailure?.code == .diskFull)
        // A visit that failed was not acknowledged, so its checkout is not offered.
        #expect(try ledger.checkout(id: refusedCheckout) == nil)

        try FileManager.default.removeItem(atPath: filler)
        #expect(JournalSegmentTests.journal(ledger, VisitJournalTests.visit("after", checkout: "c-after")) == nil)
        acknowledged += 1
        #expect(ledger.flush())
        #expect(try ledger.count(.visits) == Int64(acknowledged))
        #expect(ledger.writeFailure == nil)
        #expect(try ledger.checkout(id: "c-after")?.externalPurchaseId == "after")
    }
}
