import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Logging
import Storage
import Synchronization
import TestSupport
import Testing

@testable import LinkOut

/// The whole application in-process on 127.0.0.1, port 0, with a throwaway data folder and a log that tests
/// can search.
final class LiveApplication {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    let application: Application
    let port: Int
    let dataDir: URL
    let logLines = LogLines()

    final class LogLines: Sendable {
        private let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    /// Whether this instance made its data folder (and so removes it when it stops).
    private let ownsDataDir: Bool

    /// `dataDir`: an existing folder to run on (a restart); it is left in place. `clock`: the time the
    /// application sees (tests move it instead of sleeping).
    init(dataDir: URL? = nil, clock: Clock = .system, configure: (inout Configuration) -> Void = { _ in }) throws {
        ownsDataDir = dataDir == nil
        self.dataDir =
            dataDir ?? FileManager.default.temporaryDirectory.appendingPathComponent("linkout-live-\(UUID())")
        var configuration = try Configuration.parse(
            Data(contentsOf: Self.repositoryRoot.appendingPathComponent("config.json"))
        )
        configuration.server.host = "127.0.0.1"
        configuration.server.port = 0
        configuration.server.publicDir = Self.repositoryRoot.appendingPathComponent("Public").path
        configuration.server.shutdownGraceSeconds = 2
        configuration.storage.dataDir = self.dataDir.path
        configuration.storage.postgresURL = try TestDatabase.postgresURL(for: self.dataDir.path)
        configure(&configuration)
        let lines = logLines
        let logger = Logger(label: "linkout", level: .trace, sink: .init { lines.append($0) })
        // A start that is refused (a test expects it) runs no deinit: what it opened stops, and the folder it
        // made goes, here.
        let made: Application
        do {
            made = try Application(configuration: configuration, logger: logger, clock: clock)
        } catch {
            if ownsDataDir { try? FileManager.default.removeItem(at: self.dataDir) }
            throw error
        }
        application = made
        do {
            port = try made.start()
        } catch {
            made.shutdown()
            if ownsDataDir { try? FileManager.default.removeItem(at: self.dataDir) }
            throw error
        }
    }

    /// Returns once the reporting pass the server runs at start-up is over, so a test's first landing cannot be
    /// reported by it (tokens with an old creation date are due at once). False if it never ends.
    func firstReportingPassIsOver() -> Bool {
        let reporting = application.reporting
        // Generous for a loaded machine: it returns as soon as the pass is over.
        return eventually(within: 30) { reporting.passesCompleted.load(ordering: .relaxed) > 0 }
    }

    /// The ledger once every visit journaled so far has reached its tables (visits are acknowledged when they
    /// are on disk in the journal and ingested moments later).
    func ledger() -> Ledger {
        application.ledger.flush()
        return application.ledger
    }

    /// Records a production token as if the app had forwarded it, created a minute before `now`.
    func recordAppToken(_ id: String, now: Int64) throws {
        _ = try application.ledger.tokens.recordForwardedToken(
            TokenFields(
                ExternalPurchaseToken(
                    appAppleId: 1_234_567_890,
                    bundleId: "com.example",
                    tokenCreationDate: now - 60_000,
                    externalPurchaseId: ExternalPurchaseID(id)
                ),
                source: .app
            ),
            checkoutId: "c-\(id)",
            at: now
        )
    }

    func client() throws -> RawClient {
        try RawClient(port: port)
    }

    /// One request on a fresh connection.
    func get(_ target: String, headers: [String: String] = [:], method: String = "GET") throws -> RawClient.Response {
        let extra = headers.map { "\($0.key): \($0.value)\r\n" }.joined()
        return try client().roundTrip("\(method) \(target) HTTP/1.1\r\nHost: t\r\n\(extra)Connection: close\r\n\r\n")
    }

    func post(_ target: String, contentType: String, body: String, headers: [String: String] = [:]) throws
        -> RawClient.Response
    {
        let extra = headers.map { "\($0.key): \($0.value)\r\n" }.joined()
        return try client().roundTrip(
            "POST \(target) HTTP/1.1\r\nHost: t\r\nContent-Type: \(contentType)\r\nContent-Length: \(body.utf8.count)\r\n"
                + "\(extra)Connection: close\r\n\r\n\(body)"
        )
    }

    /// A production token of the example app, created at `now`, landed on this server (303).
    func landProductionToken(at now: Int64) throws -> ExternalPurchaseToken {
        let token = TokenMinter.mint(
            bundleId: "com.example",
            appAppleId: 1_234_567_890,
            sandbox: false,
            tokenType: nil,
            nowMilliseconds: now
        )
        let landing = try get("/?externalPurchaseToken=\(TokenMinter.encode(token))&bundleId=com.example")
        try #require(landing.status == 303)
        return token
    }

    deinit {
        application.shutdown()
        if ownsDataDir { try? FileManager.default.removeItem(at: dataDir) }
    }
}

/// Apple's example tokens (from "Receiving and decoding external purchase tokens", as in the ExternalPurchase
/// fixtures).
enum AppleVectors {
    static let v1 =
        "ewoJImFwcEFwcGxlSWQiOjEyMzQ1Njc4OTAsCgkiYnVuZGxlSWQiOiJjb20uZXhhbXBsZSIsCgkidG9rZW5DcmVhdGlvbkRhdGUiOjE3MDYxNjk2MDAwMDAsCgkiZXh0ZXJuYWxQdXJjaGFzZUlkIjoiMDAwMDAwMDAtMDAwMC0wMDAwLTAwMDAtMDAwMDAwMDAwMDAwIgp9"
    static let v2 =
        "eyJhcHBBcHBsZUlkIjoxMjM0NTY3ODkwLCJidW5kbGVJZCI6ImNvbS5leGFtcGxlIiwidG9rZW5DcmVhdGlvbkRhdGUiOjE3NTA4OTYwMDAwMDAsImV4dGVybmFsUHVyY2hhc2VJZCI6IjAwMDAwMDAwLTAwMDAtMDAwMC0wMDAwLTAwMDAwMDAwMDAwMCIsInRva2VuVHlwZSI6IlNFUlZJQ0VTIiwidG9rZW5FeHBpcmF0aW9uRGF0ZSI6MTc4MjQzMjAwMDAwMH0K"
    static let v3 =
        "eyJhcHBBcHBsZUlkIjoxMjM0NTY3ODkwLCJidW5kbGVJZCI6ImNvbS5leGFtcGxlIiwidG9rZW5DcmVhdGlvbkRhdGUiOjE3MDYxNjk2MDAwMDAsImV4dGVybmFsUHVyY2hhc2VJZCI6IlNBTkRCT1hfMDAwMDAwMDAtMDAwMC0wMDAwLTAwMDAtMDAwMDAwMDAwMDAwIiwidG9rZW5UeXBlIjoiU0VSVklDRVMiLCJ0b2tlbkV4cGlyYXRpb25EYXRlIjoxNzA2MTczMjAwMDAwfQo="
    static let v4 =
        "eyJhcHBBcHBsZUlkIjoxMjM0NTY3ODkwLCJidW5kbGVJZCI6ImNvbS5leGFtcGxlIiwidG9rZW5DcmVhdGlvbkRhdGUiOjE3MzA0NDg3MjAwMDAsImV4dGVybmFsUHVyY2hhc2VJZCI6IlNBTkRCT1hfMDAwMDAwMDAtMDAwMC0wMDAwLTAwMDAtMDAwMDAwMDAwMDAwIiwidG9rZW5UeXBlIjoiU0VSVklDRVMiLCJ0b2tlbkV4cGlyYXRpb25EYXRlIjoxNzMwNDUyMzIwMDAwfQ=="

    /// Apple's documented redirect URL, as the browser requests it.
    static let documentedTarget = "/?externalPurchaseToken=\(v1)&bundleId=com.example"
}
