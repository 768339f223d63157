import LinkOut
import Outbound

/// `linkout healthcheck`: exit 0 when the local server answers `/healthz` with 200. The container's
/// HEALTHCHECK runs it, so the image needs no curl.
enum HealthcheckCommand {
    /// `/healthz` on the address the server listens on: the configured host, or the loopback address when it
    /// listens on every address (`0.0.0.0`, `::`).
    static func localURL(host: String, port: Int) -> String {
        let target = ["", "0.0.0.0", "::"].contains(host) ? "127.0.0.1" : host
        return "http://\(target.contains(":") ? "[\(target)]" : target):\(port)/healthz"
    }

    static func run(_ arguments: [String]) throws -> Int32 {
        let (flags, _) = try CommandLineInterface.parseFlags(arguments, allowed: ["--config", "--port", "--url"])
        // A URL names its port: with both, one would be ignored without a word.
        if flags["--url"] != nil && flags["--port"] != nil {
            throw CommandLineInterface.UsageError(description: "give --url or --port, not both")
        }
        let configuration = try Configuration.load(
            overrides: .init(configPath: flags["--config"], port: flags["--port"]),
            provider: .noPayments
        )
        let url = flags["--url"] ?? localURL(host: configuration.server.host, port: configuration.server.port)
        var settings = HTTPClient.Configuration()
        settings.connectTimeout = .seconds(2)
        settings.totalTimeout = .seconds(3)
        do {
            let response = try HTTPClient(configuration: settings).perform(HTTPClientRequest(method: "GET", url: url))
            guard response.status == 200 else {
                CommandLineInterface.printError("unhealthy: \(url) answered \(response.status)\n")
                return 1
            }
            return 0
        } catch {
            // The client's own words ("connection refused"), not its type's description.
            CommandLineInterface.printError("unhealthy: \(url): \(error.message)\n")
            return 1
        }
    }
}
