import LinkOut
import Logging
import Storage

/// `linkout serve`: build the configuration, start, wait for SIGTERM/SIGINT, drain, exit 0.
enum ServeCommand {
    static func run(_ arguments: [String]) throws -> Int32 {
        let (flags, _) = try CommandLineInterface.parseFlags(
            arguments,
            allowed: ["--config", "--host", "--port", "--data-dir"]
        )
        let configuration = try Configuration.load(
            overrides: Configuration.Overrides(
                configPath: flags["--config"],
                host: flags["--host"],
                port: flags["--port"],
                dataDir: flags["--data-dir"]
            )
        )
        try configuration.server.checkListeningAddress()
        let application = try Application(configuration: configuration)
        do {
            try application.ledger.yieldWriterToLandings()
        } catch {
            application.logger.warning("the ledger's writer keeps its priority", ["error": "\(error)"])
        }
        let termination = try SignalWaiter()
        let port = try application.start()
        // Scripts and tests read the bound port from this line (with --port 0 it is the only way to learn it).
        let host =
            configuration.server.host.contains(":") ? "[\(configuration.server.host)]" : configuration.server.host
        CommandLineInterface.printOutput("linkout listening on http://\(host):\(port)\n")
        let signalName = termination.wait()
        application.logger.info("signal received", ["signal": signalName])
        application.shutdown()
        return 0
    }
}
