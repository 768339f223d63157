import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import LinkOut

/// `linkout simulate`: a StoreKit-shaped redirect URL with a fresh token, for testing without a device.
enum SimulateCommand {
    static func run(_ arguments: [String]) throws -> Int32 {
        let (flags, _) = try CommandLineInterface.parseFlags(
            arguments,
            allowed: ["--url", "--bundle-id", "--app-apple-id", "--type", "--config"],
            switches: ["--sandbox"]
        )
        let configuration = try Configuration.load(
            overrides: .init(configPath: flags["--config"]),
            provider: .noPayments
        )
        let bundleId = flags["--bundle-id"].map(BundleID.init) ?? configuration.landing.defaultBundleId
        // As a landing's token is held to it (`TokenDecoder`): a link with any other would only be refused.
        guard TokenDecoder.isBundleId(bundleId.rawValue) else {
            throw CommandLineInterface.UsageError(description: "--bundle-id must be visible ASCII, 1 to 255 bytes")
        }
        let configuredApp = configuration.apps.first { $0.bundleId == bundleId }
        // A value given is used or refused, never replaced by the configured one.
        if let given = flags["--app-apple-id"], (Int64(given) ?? 0) <= 0 {
            throw CommandLineInterface.UsageError(description: "--app-apple-id must be a positive whole number")
        }
        guard let appAppleId = flags["--app-apple-id"].flatMap({ Int64($0) }) ?? configuredApp?.appAppleId else {
            throw CommandLineInterface.UsageError(description: "no app configured for \(bundleId); pass --app-apple-id")
        }
        if let type = flags["--type"], !ReportingPolicy.customLinkTypes.contains(type) {
            let types = ReportingPolicy.customLinkTypes.joined(separator: " or ")
            throw CommandLineInterface.UsageError(description: "--type must be \(types)")
        }
        let token = TokenMinter.mint(
            bundleId: bundleId,
            appAppleId: appAppleId,
            sandbox: flags["--sandbox"] != nil,
            tokenType: flags["--type"],
            nowMilliseconds: Clock.system.nowMilliseconds()
        )
        // Without --url, the configured landing: the public URL with the first of `landing.paths` (the bare URL
        // led to `/`, a 404 when the landing is elsewhere).
        let landing = configuration.server.baseURL + (configuration.landing.paths.first ?? "/")
        let base = flags["--url"] ?? landing
        // What is printed is opened in a browser or by curl: a base that is no http(s) URL makes a link to nowhere.
        let parsed = URLComponents(string: base)
        guard let scheme = parsed?.scheme?.lowercased(), ["http", "https"].contains(scheme),
            parsed?.host?.isEmpty == false
        else {
            throw CommandLineInterface.UsageError(
                description: "--url must be an http or https URL, such as http://localhost:8080/"
            )
        }
        // Apple's destination URLs "contain no query parameters", so StoreKit appends with `?`: a base with a
        // query (or a fragment) made a link whose token the landing never saw.
        guard !base.contains("?"), !base.contains("#") else {
            throw CommandLineInterface.UsageError(
                description: "--url must have no query or fragment: StoreKit appends its own query to a destination "
                    + "URL, which Apple allows none in"
            )
        }
        CommandLineInterface.printOutput(TokenMinter.redirectURL(base: base, token: token) + "\n")
        return 0
    }
}
