import Foundation

/// Which process listens on a TCP port, read from Linux's `/proc` without connecting: the sockets listening on the
/// port (`/proc/net/tcp`, `/proc/net/tcp6`), and whether a process's descriptors include one of them.
enum ListeningSockets {
    /// `st` of a listening socket in `/proc/net/tcp*` (the kernel's `TCP_LISTEN`).
    private static let listenState = "0A"

    /// The inodes of the sockets listening on `port`, on any address.
    static func inodes(port: Int) -> Set<String> {
        var inodes: Set<String> = []
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
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

    /// Whether process `pid` holds a socket listening on `port`; nil when its descriptors cannot be read (another
    /// user's process, or one that ended).
    static func process(_ pid: Int32, listensOn port: Int) -> Bool? {
        let folder = "/proc/\(pid)/fd"
        guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return nil }
        let wanted = Set(inodes(port: port).map { "socket:[\($0)]" })
        return descriptors.contains { descriptor in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + descriptor)).map(wanted.contains)
                == true
        }
    }
}
