import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A size-limited tmpfs, mounted for one test. Mounting needs root (CAP_SYS_ADMIN); without it the test
/// fails and says so, because a skipped test would hide that the full-disk path went unchecked.
public final class SmallFilesystem {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public let path: String

    public init(bytes: Int) throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-tmpfs-\(UUID())").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard mount("tmpfs", path, "tmpfs", 0, "size=\(bytes),mode=0700") == 0 else {
            let reason = String(cString: strerror(errno))
            rmdir(path)
            throw Failure(description: "cannot mount a \(bytes)-byte tmpfs on \(path): \(reason); run as root")
        }
    }

    /// Makes the filesystem read-only, as a read-only mount of a copied ledger is.
    public func remountReadOnly() throws {
        guard mount(nil, path, nil, UInt(MS_REMOUNT | MS_RDONLY), nil) == 0 else {
            throw Failure(description: "cannot remount \(path) read-only: \(String(cString: strerror(errno)))")
        }
    }

    /// Unmounts (lazily if something still holds a file there) and removes the mount point.
    public func unmount() {
        if umount2(path, 0) != 0 { umount2(path, Int32(MNT_DETACH)) }
        rmdir(path)
    }

    /// Writes a file until the filesystem is full; returns its path.
    public func fill() throws -> String {
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
