import Foundation
import LinkOut

/// `linkout check [--online] [--config PATH] [--data-dir DIR]`: the pre-flight check before launch, one line per
/// check and a summary; exit 0 only when every check passes (1 otherwise, 2 when the configuration cannot load).
enum CheckCommand {
    static func run(_ arguments: [String]) throws -> Int32 {
        let (flags, _) = try CommandLineInterface.parseFlags(
            arguments,
            allowed: ["--config", "--data-dir"],
            switches: ["--online"]
        )
        let configuration = try Configuration.load(
            overrides: .init(configPath: flags["--config"], dataDir: flags["--data-dir"])
        )
        let check = PreflightCheck(configuration: configuration)
        var results = check.offline()
        if flags["--online"] != nil { results += check.online() }
        for result in results { CommandLineInterface.printOutput(result.line + "\n") }
        let failed = results.filter { !$0.passed }.count
        CommandLineInterface.printOutput(
            "\(results.count) checks: \(results.count - failed) passed, \(failed) failed"
                + (flags["--online"] == nil ? " (offline only; --online calls Apple, the provider and publicURL)" : "")
                + "\n"
        )
        return failed == 0 ? 0 : 1
    }
}
