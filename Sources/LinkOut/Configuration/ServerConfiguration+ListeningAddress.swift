import Domain
import HTTPServer

#if canImport(Glibc)
import Glibc
#endif

extension Configuration.Server {
    /// Checks the address `serve` listens on before anything is opened: a host this machine does not have, or a
    /// port another process serves, stops a start before the ledger is made (a mistyped `--data-dir` beside a
    /// busy port left a new ledger, with its keys, behind).
    package func checkListeningAddress() throws {
        do {
            try HTTPServer.checkAddress(host: host, port: port)
        } catch {
            throw listeningError(error)
        }
    }

    /// A failed bind as the operator reads it: a host that names no address here is the configuration's mistake
    /// (exit 2, naming the field); a port in use says so.
    func listeningError(_ error: SocketError) -> any Error {
        if error.isAddressNotHere {
            return ConfigurationError(
                field: "server.host",
                problem: Self.looksLikeAHost(host)
                    ? "\"\(host)\" is not an address this machine can listen on"
                    : "is not an address this machine can listen on, nor a host name"
            )
        }
        if error.errno == EADDRINUSE {
            return PortInUse(host: host, port: port)
        }
        return error
    }

    /// Whether `text` has a host name's or an address's characters, so it may be shown back: a value put in the
    /// wrong field (a secret pasted as the host) is not echoed to the terminal and the logs.
    static func looksLikeAHost(_ text: String) -> Bool {
        // A name's labels are at most 63 characters (RFC 1035): a long token of letters and digits is no host.
        text.utf8.count <= 253 && !text.split(separator: ".").contains { $0.utf8.count > 63 }
            && text.utf8.allSatisfy { byte in
                ASCIIBytes.isLetter(byte) || ASCIIBytes.isDigit(byte) || ":-.%[]".utf8.contains(byte)
            }
    }

    /// Another process serves the port (another linkout, or anything else).
    struct PortInUse: Error, CustomStringConvertible {
        var host: String
        var port: Int

        var description: String {
            "\(host):\(port) is in use by another process: stop it, or set server.port (or --port) to a free port"
        }
    }
}
