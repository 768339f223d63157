import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// `linkout <subcommand> [flags]`: argument parsing only; the work happens in the library.
public enum CommandLineInterface {
    static let usage = """
        usage: linkout <command> [options]

        commands:
          serve [--config PATH] [--host H] [--port N] [--data-dir DIR]   run the server
          help                                                           show this text

        """

    /// Runs a subcommand and returns the process exit code (0 ok, 1 failure, 2 bad usage or configuration).
    public static func run(_ arguments: [String]) -> Int32 {
        guard let command = arguments.first else {
            printError(usage)
            return 2
        }
        let rest = Array(arguments.dropFirst())
        switch command {
        case "serve": return serve(rest)
        case "help", "--help", "-h":
            print(usage, terminator: "")
            return 0
        default:
            printError("linkout: unknown command '\(command)'\n\n" + usage)
            return 2
        }
    }

    static func serve(_ arguments: [String]) -> Int32 {
        let flags: [String: String]
        do {
            flags = try parseFlags(arguments, allowed: ["--config", "--host", "--port", "--data-dir"])
        } catch {
            printError("linkout serve: \(error)\n")
            return 2
        }
        let configuration: Configuration
        do {
            configuration = try Configuration.load(
                overrides: Configuration.Overrides(
                    configPath: flags["--config"],
                    host: flags["--host"],
                    port: flags["--port"],
                    dataDir: flags["--data-dir"]
                )
            )
        } catch {
            printError("linkout: \(error)\n")
            return 2
        }
        let application = Application(configuration: configuration)
        let port: Int
        do {
            port = try application.start()
        } catch {
            printError("linkout: cannot start: \(error)\n")
            return 1
        }
        // Scripts and tests read the bound port from this line (with --port 0 it is the only way to learn it).
        printOutput("linkout listening on http://\(displayHost(configuration.server.host)):\(port)\n")
        let signalName = SignalWaiter.waitForTermination()
        application.logger.info("signal received", ["signal": signalName])
        application.shutdown()
        return 0
    }

    static func displayHost(_ host: String) -> String {
        host.contains(":") ? "[\(host)]" : host
    }

    struct UsageError: Error, CustomStringConvertible {
        var description: String
    }

    /// `--name value` and `--name=value` pairs; anything else is a usage error.
    static func parseFlags(_ arguments: [String], allowed: Set<String>) throws -> [String: String] {
        var flags: [String: String] = [:]
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            var name = argument
            var value: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                value = String(argument[argument.index(after: equals)...])
            }
            guard allowed.contains(name) else { throw UsageError(description: "unknown option '\(name)'") }
            if value == nil {
                guard index + 1 < arguments.count else {
                    throw UsageError(description: "option '\(name)' needs a value")
                }
                index += 1
                value = arguments[index]
            }
            flags[name] = value
            index += 1
        }
        return flags
    }

    /// Unbuffered, so a script reading a pipe sees the line at once.
    static func printOutput(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    static func printError(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
