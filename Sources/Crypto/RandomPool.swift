import CCrypto
import Synchronization

/// Random bytes from OpenSSL's generator (seeded by the kernel's), drawn a block at a time: every landing mints
/// a session id, and one draw of 4 KiB serves some 240 of them, where a draw (or an HMAC) each cost more than
/// the rest of the id. Bytes handed out are dropped from the pool, so no two callers ever get the same ones.
public final class RandomPool: Sendable {
    private struct Block {
        var bytes = [UInt8](repeating: 0, count: RandomPool.blockSize)
        /// Where the bytes not handed out yet start; the block is drawn anew once too few are left.
        var next = RandomPool.blockSize
    }

    static let blockSize = 4096

    private let block = Mutex(Block())

    public init() {}

    /// `count` random bytes (at most a block's worth).
    public func take(_ count: Int) -> [UInt8] {
        precondition(count > 0 && count <= Self.blockSize, "a draw is at most a block")
        return block.withLock { block in
            if block.next + count > Self.blockSize {
                Self.draw(into: &block.bytes)
                block.next = 0
            }
            defer {
                // Wiped once taken: a later read of the pool (a core dump, say) shows no id handed out.
                for index in block.next..<(block.next + count) { block.bytes[index] = 0 }
                block.next += count
            }
            return Array(block.bytes[block.next..<(block.next + count)])
        }
    }

    /// Fills `bytes` from RAND_bytes; should it ever fail (its seed source gone), from the standard library's
    /// generator, which reads the kernel's directly.
    private static func draw(into bytes: inout [UInt8]) {
        let drawn = bytes.withUnsafeMutableBufferPointer { buffer in
            RAND_bytes(buffer.baseAddress, Int32(buffer.count)) == 1
        }
        guard !drawn else { return }
        var generator = SystemRandomNumberGenerator()
        for index in bytes.indices { bytes[index] = generator.next() }
    }
}
