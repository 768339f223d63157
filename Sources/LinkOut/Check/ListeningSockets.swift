import Foundation
import Lifecycle

/// Which process listens on a TCP port, read from Linux's `/proc` without connecting: the sockets listening on the
/// port (`/proc/net/tcp`, `/proc/net/tcp6`), and the processes whose descriptors hold one.
enum ListeningSockets {
    /// `st` of a listening socket in `/proc/net/tcp*` (the kernel's `TCP_LISTEN`).
    private static let listenState = "0A"

    /// The inodes of the sockets listening on `port`, on any address.
    static func inodes(port: Int) -> Set<String> {
        var inodes: Set<String> = []
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = ProcFile.read(table) else { continue }
            // `sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode …`, the address
            // `0100007F:1F90` (the port in hex after the colon); the first line is the header.
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count > 9, fields[3] == listenState,
                    let local = fields[1].split(separator: ":").last, Int(local, radix: 16) == port
                else { continue }
                inodes.insert(String(fields[9]))
            }
        }
        return inodes
    }

    /// A process holding a socket listening on `port`: `preferred` when it does, else the first other one whose
    /// descriptors this user can read; nil when none it can read does (another user's process, or none).
    static func listener(port: Int, preferring preferred: Int32) -> Int32? {
        let wanted = Set(inodes(port: port).map { "socket:[\($0)]" })
        guard !wanted.isEmpty else { return nil }
        if holds(preferred, anyOf: wanted) { return preferred }
        let processes = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return processes.lazy.compactMap(Int32.init).first { $0 != preferred && holds($0, anyOf: wanted) }
    }

    /// Whether process `pid`'s descriptors include one of `sockets` (false when they cannot be read).
    private static func holds(_ pid: Int32, anyOf sockets: Set<String>) -> Bool {
        let folder = "/proc/\(pid)/fd"
        guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return false }
        return descriptors.contains { descriptor in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + descriptor)).map(
                sockets.contains
            )
                == true
        }
    }
}
