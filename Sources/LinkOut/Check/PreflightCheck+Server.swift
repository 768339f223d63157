import Foundation
import HTTPServer
import Outbound
import Storage

#if canImport(Glibc)
import Glibc
#endif

/// What `linkout serve` needs of this machine, checked the way it uses it: the address to listen on, the files
/// it loads at start, and a data folder it can write.
extension PreflightCheck {
    /// The host is this machine's, and the port is free or a running linkout serves it (the check is also run
    /// next to the running server, after a start).
    func serverAddress() -> Result {
        let server = configuration.server
        do {
            try HTTPServer.checkAddress(host: server.host, port: server.port)
        } catch {
            // In use by this installation's server: one that answers `/healthz` there and, on SQLite, is the process
            // that holds this data folder (another process answering 200 there is not enough, nor another linkout
            // while this folder's serves another port).
            let storage = configuration.storage
            guard error.errno == EADDRINUSE, answersHealth(host: server.host, port: server.port) else {
                return Self.fail("server address", "\(server.listeningError(error))")
            }
            let served = "\(server.host):\(server.port) is served by a running server"
            guard storage.postgresURL == nil else { return Self.pass("server address", served) }
            guard let holder = Ledger.servingProcess(directory: storage.dataDir) else {
                return Self.fail("server address", "\(served), but not one on \(storage.dataDir): \(error)")
            }
            guard let listener = ListeningSockets.listener(port: server.port, preferring: holder) else {
                return Self.pass(
                    "server address",
                    "\(served), and one runs on \(storage.dataDir) (process \(holder), whose sockets this user cannot "
                        + "read to tell whether it is the same)"
                )
            }
            guard listener == holder else {
                return Self.fail(
                    "server address",
                    "\(server.host):\(server.port) is served by process \(listener), not by the server on "
                        + "\(storage.dataDir) (process \(holder)): \(error)"
                )
            }
            return Self.pass("server address", "\(served) (process \(holder), on \(storage.dataDir))")
        }
        // Free here, but this data folder already served elsewhere (another port or host): `serve` would refuse
        // to start a second server on it.
        if configuration.storage.postgresURL == nil,
            let holder = Ledger.servingProcess(directory: configuration.storage.dataDir)
        {
            return Self.fail(
                "server address",
                "\(server.host):\(server.port) is free, but process \(holder) already serves "
                    + "\(configuration.storage.dataDir) elsewhere: one data folder takes one server"
            )
        }
        return Self.pass("server address", "\(server.host):\(server.port) is free")
    }

    /// Whether what listens on `host:port` answers `/healthz` as linkout does.
    private func answersHealth(host: String, port: Int) -> Bool {
        let local = ["0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"][host] ?? host
        let authority = local.contains(":") ? "[\(local)]:\(port)" : "\(local):\(port)"
        var http = HTTPClient.Configuration()
        http.totalTimeout = .seconds(5)
        let client = HTTPClient(configuration: http)
        // Asked twice: one lost answer (a busy machine) does not make a running server someone else's.
        return (0..<2).contains { _ in
            (try? client.perform(HTTPClientRequest(method: "GET", url: "http://\(authority)/healthz")))
                .map(Self.isLinkoutHealth) == true
        }
    }

    /// linkout's own answer to `/healthz` (`200`, `ok`): another server's 200 there is not a running linkout.
    static func isLinkoutHealth(_ response: HTTPClientResponse) -> Bool {
        response.status == 200 && response.body == Array("ok\n".utf8)
    }

    /// The pages, dashboard and API description under `server.publicDir`, the notification roots and the
    /// entitlement signing key load as the server loads them.
    func serverFiles() -> Result {
        do {
            _ = try Pages.load(publicDir: configuration.server.publicDir, isSecure: true, apps: configuration.apps)
            _ = try DashboardPages.load(publicDir: configuration.server.publicDir)
            _ = try OpenAPIRoute(publicDir: configuration.server.publicDir)
            _ = try AppStoreNotifications.verifier(configuration.apple)
            if !configuration.appEntitlements.signingKeyFile.isEmpty {
                _ = try EntitlementKeyring.readKeyFile(configuration.appEntitlements.signingKeyFile)
            }
        } catch let error as ConfigurationError {
            return Self.fail("server files", "\(error.field) \(error.problem)")
        } catch {
            return Self.fail("server files", "\(error)")
        }
        return Self.pass("server files", "pages and keys load from \(configuration.server.publicDir)")
    }

    /// The SQLite data folder (or the folder it would be made in) can be written by this user: the ledger and
    /// the visit journal live there.
    func dataFolder() -> Result {
        let storage = configuration.storage
        guard storage.postgresURL == nil else { return Self.pass("data folder", "none: the ledger is on PostgreSQL") }
        var folder = storage.dataDir.isEmpty ? "." : storage.dataDir
        while !FileManager.default.fileExists(atPath: folder) {
            let parent = (folder as NSString).deletingLastPathComponent
            folder = parent.isEmpty ? "." : parent
        }
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), !isFolder.boolValue {
            return Self.fail("data folder", "\(folder) is a file, not a folder")
        }
        let ledger = (storage.dataDir as NSString).appendingPathComponent("linkout.sqlite")
        for path in [folder, ledger] where FileManager.default.fileExists(atPath: path) {
            guard access(path, R_OK | W_OK) == 0 else {
                return Self.fail(
                    "data folder",
                    "\(path) (storage.dataDir) cannot be written by this user (\(String(cString: strerror(errno)))): "
                        + "run linkout as the user that owns it, or give that user the folder"
                )
            }
        }
        // Unknown (the system does not say): judged by what it can tell, writability.
        let free = Ledger.freeBytes(in: folder) ?? Int.max
        if free < Ledger.nearlyFullBytes {
            return Self.fail(
                "data folder",
                "\(folder) is writable, on a disk with \(Self.megabytes(free)) free: "
                    + "landings are answered 503 once it is full (free space there)"
            )
        }
        let note =
            free < Ledger.spareHeadroomBytes
            ? " (\(Self.megabytes(free)) free: below \(Self.megabytes(Ledger.spareHeadroomBytes)) the journal makes no "
                + "segment ahead, and each sync also writes the file's size)" : ""
        guard folder == storage.dataDir || folder == "." && storage.dataDir.isEmpty else {
            return Self.pass(
                "data folder",
                "\(storage.dataDir) does not exist yet; the server makes it in \(folder)" + note
            )
        }
        return Self.pass("data folder", "\(storage.dataDir) is writable" + note)
    }

    private static func megabytes(_ bytes: Int) -> String { "\(bytes >> 20) MB" }
}
