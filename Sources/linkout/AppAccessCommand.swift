import Foundation
import LinkOut
import Storage

/// `linkout credentials list --purchase ID | revoke ID | reissue ID` and `linkout keys list | rotate
/// [--publish-ahead SECONDS] | retire KID`: the operator's side of apps without a backend, the same actions as
/// the admin API. Safe next to a running server: each action is one transaction; a running server signs with a
/// rotated key within a minute and publishes it at once.
enum AppAccessCommand {
    static func credentials(_ arguments: [String]) throws -> Int32 {
        let subcommand = arguments.first ?? ""
        let expected = ["list": 0, "revoke": 1, "reissue": 1]
        guard let count = expected[subcommand] else {
            throw CommandLineInterface.UsageError(
                description: "use 'linkout credentials list --purchase ID', 'revoke ID' or 'reissue ID'"
            )
        }
        // Each subcommand takes its own options only: one it ignores is refused (the operator meant something).
        let (flags, positional) = try CommandLineInterface.parseFlags(
            Array(arguments.dropFirst()),
            allowed: Set(["--config", "--data-dir"] + (subcommand == "list" ? ["--purchase"] : [])),
            positional: count
        )
        return try withAdministration(flags) { administration, ledger in
            switch subcommand {
            case "list":
                guard let purchaseId = flags["--purchase"] else {
                    throw CommandLineInterface.UsageError(description: "use 'linkout credentials list --purchase ID'")
                }
                for credential in try administration.credentials(purchaseId: purchaseId) {
                    CommandLineInterface.printOutput(describe(credential))
                }
                return 0
            case "revoke":
                let before = try administration.credentialState(positional[0])
                guard let revoked = try administration.revoke(credentialId: positional[0]) else {
                    CommandLineInterface.printError("linkout credentials: no credential has the id \(positional[0])\n")
                    return 1
                }
                try CommandAudit.record(
                    ledger,
                    action: "credential.revoke",
                    subject: revoked.id,
                    before: before,
                    after: "revoked"
                )
                CommandLineInterface.printOutput(describe(revoked))
                return 0
            default:
                let before = try administration.credentialState(positional[0])
                guard let (credential, secret) = try administration.reissue(credentialId: positional[0]) else {
                    CommandLineInterface.printError("linkout credentials: no credential has the id \(positional[0])\n")
                    return 1
                }
                try CommandAudit.record(
                    ledger,
                    action: "credential.reissue",
                    subject: positional[0],
                    before: before,
                    after: "replaced by \(credential.id)"
                )
                CommandLineInterface.printOutput(describe(credential) + "secret (shown once): \(secret)\n")
                return 0
            }
        }
    }

    static func keys(_ arguments: [String]) throws -> Int32 {
        let subcommand = arguments.first ?? ""
        let expected = ["list": 0, "rotate": 0, "retire": 1]
        guard let count = expected[subcommand] else {
            throw CommandLineInterface.UsageError(
                description:
                    "use 'linkout keys list', 'keys rotate [--publish-ahead SECONDS]' or 'keys retire KID [--force]'"
            )
        }
        // `keys rotate --force` rotated a key: each subcommand takes its own options only.
        let (flags, positional) = try CommandLineInterface.parseFlags(
            Array(arguments.dropFirst()),
            allowed: Set(["--config", "--data-dir"] + (subcommand == "rotate" ? ["--publish-ahead"] : [])),
            switches: subcommand == "retire" ? ["--force"] : [],
            positional: count
        )
        return try withAdministration(flags) { administration, ledger in
            switch subcommand {
            case "rotate":
                let ahead = try flags["--publish-ahead"].map { text in
                    guard let value = Int64(text), (0...(30 * 86_400)).contains(value) else {
                        throw CommandLineInterface.UsageError(description: "--publish-ahead is 0 to 2592000 seconds")
                    }
                    return value
                }
                let before = try administration.signingState()
                let key = try administration.rotate(publishAheadSeconds: ahead)
                try CommandAudit.record(
                    ledger,
                    action: "signing_key.rotate",
                    subject: nil,
                    before: before,
                    after: "new key \(key.kid)"
                )
                CommandLineInterface.printOutput("rotated: \(key.kid) signs from \(date(key.signsFrom))\n")
            case "retire":
                let before = try administration.keyState(positional[0])
                try administration.retire(kid: positional[0], force: flags["--force"] != nil)
                try CommandAudit.record(
                    ledger,
                    action: "signing_key.retire",
                    subject: positional[0],
                    before: before,
                    after: flags["--force"] == nil ? "retired" : "retired (forced)"
                )
                // A server reads the keys again once a minute (`EntitlementKeyring.refreshMilliseconds`): a key
                // retired in force signed there meanwhile, while the JWKS no longer listed it.
                let meanwhile =
                    flags["--force"] == nil
                    ? "" : "; a running server may sign with it for up to a minute more: restart it to stop at once"
                CommandLineInterface.printOutput("retired: \(positional[0])\(meanwhile)\n")
            default:
                for key in try administration.keys() {
                    let state = key.retiredAt.map { "retired \(date($0))" } ?? "published"
                    let origin = key.privateKeyPEM == nil ? "key file" : "generated"
                    CommandLineInterface.printOutput(
                        "\(key.kid)  \(origin)  signs from \(date(key.signsFrom))  \(state)\n"
                    )
                }
            }
            return 0
        }
    }

    private static func withAdministration(
        _ flags: [String: String],
        _ body: (AppAccessAdministration, Ledger) throws -> Int32
    ) throws -> Int32 {
        let configuration = try Configuration.load(
            overrides: .init(configPath: flags["--config"], dataDir: flags["--data-dir"]),
            provider: .noPayments
        )
        // The reader role leaves the visit journal to a server that may be running on the same folder.
        let ledger = try CommandLineInterface.openLedgerBesideServer(configuration)
        defer { ledger.close() }
        return try body(try AppAccessAdministration(configuration: configuration, ledger: ledger), ledger)
    }

    private static func describe(_ credential: CustomerCredential) -> String {
        let state = credential.revokedAt.map { "revoked \(date($0))" } ?? "active"
        let replaced = credential.replacedBy.map { ", replaced by \($0)" } ?? ""
        return "\(credential.id)  \(credential.bundleId)  \(state)\(replaced)  purchases: "
            + credential.purchaseIds.joined(separator: " ") + "\n"
    }

    private static func date(_ milliseconds: Int64) -> String {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000).formatted(.iso8601)
    }
}
