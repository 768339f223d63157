import Crypto
import Foundation
import Synchronization
import Testing

/// The pool fresh session ids come from: every draw new bytes, across the blocks it refills.
@Suite("Random pool")
struct RandomPoolTests {
    @Test func drawsNeverRepeatAcrossRefills() {
        let pool = RandomPool()
        // 17 bytes at a time (a session id's 130 bits) over several 4 KiB blocks, each drawn anew when fewer than
        // 17 bytes are left of the one before.
        var seen = Set<[UInt8]>()
        var counts = [Int](repeating: 0, count: 256)
        for _ in 0..<2_000 {
            let bytes = pool.take(17)
            #expect(bytes.count == 17)
            seen.insert(bytes)
            for byte in bytes { counts[Int(byte)] += 1 }
        }
        #expect(seen.count == 2_000)
        // 34,000 bytes: each value about 133 times. A pool handing out zeros (or a stuck block) would show here.
        #expect(counts.allSatisfy { $0 > 50 && $0 < 250 })
    }

    @Test func threadsDrawingAtOnceGetDifferentBytes() {
        let pool = RandomPool()
        let draws = Mutex<[[UInt8]]>([])
        let done = DispatchGroup()
        for _ in 0..<4 {
            done.enter()
            Thread {
                var mine: [[UInt8]] = []
                for _ in 0..<500 { mine.append(pool.take(16)) }
                draws.withLock { $0.append(contentsOf: mine) }
                done.leave()
            }.start()
        }
        done.wait()
        #expect(Set(draws.withLock { $0 }).count == 2_000)
    }
}
