import Foundation
import LinkOut
import Logging
import Outbound
import Storage

/// `linkout <subcommand> [flags]`: argument parsing only; the work happens in the library.
public enum CommandLineInterface {
    static let usage = """
        usage: linkout <command> [options]

        commands:
          serve [--config PATH] [--host H] [--port N] [--data-dir DIR]
              run the server (flags beat LINKOUT_* environment variables, which beat config.json)
          decode TOKEN [--config PATH]
              print the token's JSON and whether this configuration accepts it (exit 1 if not)
          simulate [--url BASE] [--bundle-id ID] [--app-apple-id N] [--sandbox] [--type ACQUISITION|SERVICES]
              print a StoreKit-shaped redirect URL with a freshly minted token
          export [--format csv|json] [--table tokens|purchases|line-items|audit] [--data-dir DIR] [--config PATH]
              write the token ledger (or the purchases, the line items as Apple sees them, the audit log) to
              standard output
          report --dry-run [--data-dir DIR] [--config PATH]
              print the reports to Apple that are due, without sending them
          report status [--data-dir DIR] [--config PATH]
              print reports by state, the oldest unreported token, and why reports wait
          report attention [--data-dir DIR] [--config PATH]
              list the tokens whose report Apple rejected or whose line items it refused, with the fix
          report resend|no-line-item EXTERNAL_PURCHASE_ID [--data-dir DIR] [--config PATH]
              send a rejected report again as it is, or report the token NO_LINE_ITEM
          report restate EXTERNAL_PURCHASE_ID LINE_ITEM_ID FILE | retract EXTERNAL_PURCHASE_ID LINE_ITEM_ID
                 [--data-dir DIR] [--config PATH]
              replace a line item (Apple's JSON in FILE, - for stdin), or withdraw it
          close --month YYYY-MM [--format json|csv|text] [--environment production|sandbox] [--limit N]
              the close of a UTC month: tokens and line items accepted by Apple, or why not; exit 0 only when
              closed (3 open, 4 closing, 5 late, 64 bad usage)
          notifications recover --since DATE [--until DATE] [--config PATH] [--data-dir DIR]
              fetch Apple's notification history (Get Notification History) and act on what was missed
          check [--online] [--config PATH] [--data-dir DIR]
              the pre-flight check before launch: configuration, keys and secrets, the ledger; with --online,
              Apple takes the key, the provider its key, the webhook receiver a signed test event, and
              publicURL answers; exit 0 only when every check passes
          audit [--limit N] [--before ID] [--format text|json] [--data-dir DIR] [--config PATH]
              who changed what Apple, the provider or the backend receives, newest first
          erase --email ADDRESS | --account-token UUID [--data-dir DIR] [--config PATH]
              take a person's data (e-mail, names, address lines, phone, account token) out of the ledger,
              keeping ids, amounts, dates and country; recorded in the audit trail
          backup --to PATH [--data-dir DIR] [--config PATH]
              a consistent copy of the SQLite ledger, safe next to a running server, with every visit it
              acknowledged (the file must not exist)
          restore --from PATH --data-dir DIR [--force] [--keep-schema] [--config PATH]
              check a backup and put it in place as the ledger of an empty folder (--force: replace the one
              there; never under a running server; --keep-schema: leave an earlier release's backup at its
              schema, for a rollback to that release)
          credentials list --purchase ID | revoke ID | reissue ID [--data-dir DIR] [--config PATH]
              the customer credentials apps check their entitlements with: list a purchase's, revoke one, or
              issue a new one in its place (the secret is printed once)
          keys list | rotate [--publish-ahead SECONDS] | retire KID [--force] [--data-dir DIR] [--config PATH]
              the keys that sign entitlements (published at /.well-known/jwks.json): rotate in a new one, or
              take an old one out once nothing it signed is still valid (at once with --force: a leaked key)
          version, --version
              print the release and the ledger schema version it migrates to
          healthcheck [--port N] [--url URL]
              exit 0 when the local server answers /healthz (for container health checks); --url is the
              whole address asked, such as http://127.0.0.1:8080/healthz
          help
              show this text

        A command that reads the ledger works on the one `linkout serve` made: a folder or database with no
        ledger is refused (exit 2), and nothing is created there.

        """

    /// Runs a subcommand and returns the process exit code (0 ok, 1 failure, 2 bad usage or configuration).
    public static func run(_ arguments: [String]) -> Int32 {
        let code = dispatch(arguments)
        guard let failure = StandardStreams.outputFailure else { return code }
        // What it said is lost, not what it did: a reissued credential's secret, shown once, is reissued again.
        printError(
            "linkout: the output could not be written (\(failure))"
                + (code == 0 ? "; what the command did is done, and what it printed is lost\n" : "\n")
        )
        return code == 0 ? 1 : code
    }

    private static func dispatch(_ arguments: [String]) -> Int32 {
        guard let command = arguments.first else {
            printError(usage)
            return 2
        }
        let rest = Array(arguments.dropFirst())
        do {
            switch command {
            case "serve": return try ServeCommand.run(rest)
            case "decode": return try DecodeCommand.run(rest)
            case "simulate": return try SimulateCommand.run(rest)
            case "export": return try ExportCommand.run(rest)
            case "report": return try ReportCommand.run(rest)
            case "close": return try CloseCommand.run(rest)
            case "notifications": return try NotificationsCommand.run(rest)
            case "check": return try CheckCommand.run(rest)
            case "audit": return try AuditCommand.run(rest)
            case "erase": return try EraseCommand.run(rest)
            case "backup": return try BackupCommand.backup(rest)
            case "restore": return try BackupCommand.restore(rest)
            case "credentials": return try AppAccessCommand.credentials(rest)
            case "keys": return try AppAccessCommand.keys(rest)
            case "healthcheck": return try HealthcheckCommand.run(rest)
            case "version", "--version":
                _ = try parseFlags(rest, allowed: [])
                printOutput(Release.summary + "\n")
                return 0
            case "help", "--help", "-h":
                _ = try parseFlags(rest, allowed: [])
                printOutput(usage)
                return 0
            default:
                printError("linkout: unknown command '\(TerminalText.visible(command))'\n\n" + usage)
                return 2
            }
        } catch let error as UsageError {
            printError("linkout \(command): \(error)\n")
            return 2
        } catch let error as ConfigurationError {
            printError("linkout: \(error)\n")
            return 2
        } catch let error as StorageError {
            printError("linkout \(command): \(explained(error))\n")
            // A rollback onto a ledger a later release migrated, a command of a newer release beside the one that
            // runs the ledger, or a command pointed where there is no ledger: refused like a bad configuration.
            return [.newerSchema, .olderSchema, .noLedger].contains(error.code) ? 2 : 1
        } catch let error as HTTPClientError {
            printError("linkout \(command): \(error.message)\n")
            return 1
        } catch {
            printError("linkout \(command): \(error)\n")
            return 1
        }
    }

    /// The error's message with the system's reason (`messageWithReason`), and what ends the failure where that
    /// is the operator's to do.
    static func explained(_ error: StorageError) -> String {
        // A server that cannot start on a full disk under a restart policy starts again and again: say what ends it.
        let hint =
            if let remedy = error.remedy {
                " (\(remedy))"
            } else if error.code == .diskFull {
                " (free space on the data folder's disk and run it again; a server's acknowledged visits stay in its "
                    + "journal and are filed at its next start)"
            } else if error.isPermissionDenied {
                " (run linkout as the user that owns the data folder, or give that user the folder)"
            } else {
                ""
            }
        return error.messageWithReason + hint
    }

    struct UsageError: Error, CustomStringConvertible {
        var description: String
    }

    /// `--name value` and `--name=value` pairs; names in `switches` take no value. Anything else is a usage error:
    /// an option given twice (kept once, `erase --email a --email b` erased only b and said done), a switch given
    /// a value (`--force=false` forced), and an option whose value would be the next option (`--data-dir --force`
    /// made a folder named `--force`; `--data-dir=--force` still says it is meant).
    static func parseFlags(
        _ arguments: [String],
        allowed: Set<String>,
        switches: Set<String> = [],
        positional: Int = 0,
        usage: String? = nil
    ) throws(UsageError) -> (flags: [String: String], positional: [String]) {
        var flags: [String: String] = [:]
        var rest: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--") else {
                guard rest.count < positional else {
                    throw UsageError(description: "unexpected argument '\(argument)'")
                }
                rest.append(argument)
                continue
            }
            var name = argument
            var value: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                value = String(argument[argument.index(after: equals)...])
            }
            guard switches.contains(name) || allowed.contains(name) else {
                // Shown as typed would forge lines on the terminal when it holds a line break or an escape.
                throw UsageError(
                    description: "unknown option '\(TerminalText.visible(name))'"
                        + (name == "--help" ? ": 'linkout help' lists every command and its options" : "")
                )
            }
            guard flags[name] == nil else {
                throw UsageError(description: "option '\(name)' is given twice: give it once (one run, one value)")
            }
            if switches.contains(name) {
                guard value == nil else { throw UsageError(description: "option '\(name)' takes no value") }
                flags[name] = "true"
                continue
            }
            if value == nil {
                guard index < arguments.count, !arguments[index].hasPrefix("--") else {
                    throw UsageError(description: "option '\(name)' needs a value")
                }
                value = arguments[index]
                index += 1
            }
            flags[name] = value
        }
        guard rest.count == positional else {
            throw UsageError(description: "missing argument" + (usage.map { ": use 'linkout \($0)'" } ?? ""))
        }
        return (flags, rest)
    }

    /// Unbuffered, so a script reading a pipe sees the text at once.
    static func printOutput(_ text: String) {
        StandardStreams.writeOutput(text)
    }

    /// Each line's control characters written as escapes: a message names what the operator typed (a path, an
    /// id), and an escape sequence in it reached the terminal.
    static func printError(_ text: String) {
        StandardStreams.writeError(
            text.split(separator: "\n", omittingEmptySubsequences: false).map {
                TerminalText.visible(String($0))
            }.joined(separator: "\n")
        )
    }
}
