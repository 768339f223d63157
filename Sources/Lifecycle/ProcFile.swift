import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A Linux `/proc` file read whole. Such a file has no size to go by (it reads as 0 bytes long) and comes a page at
/// a time: reading one chunk, or `String(contentsOfFile:)`, got only its first 4 KiB, and a lock or a listening
/// socket listed after that was missed. Read with `read(2)` until it returns 0.
public enum ProcFile {
    public static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return count == 0 ? String(decoding: bytes, as: UTF8.self) : nil }
            bytes += chunk[..<count]
        }
    }
}
