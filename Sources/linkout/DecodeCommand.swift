import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import LinkOut

/// `linkout decode TOKEN`: the token's JSON, its environment, and this configuration's verdict.
enum DecodeCommand {
    static func run(_ arguments: [String]) throws -> Int32 {
        let (flags, positional) = try CommandLineInterface.parseFlags(arguments, allowed: ["--config"], positional: 1)
        let configuration = try Configuration.load(
            overrides: .init(configPath: flags["--config"]),
            provider: .noPayments
        )
        switch TokenDecoder.decode(positional[0]) {
        case .failure(let rejection):
            CommandLineInterface.printError("invalid token (\(rejection.code)): \(rejection.message)\n")
            return 1
        case .success(let token):
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let json = String(decoding: try encoder.encode(token), as: UTF8.self)
            CommandLineInterface.printOutput(json + "\n")
            CommandLineInterface.printOutput("environment: \(token.environment.rawValue)\n")
            let validator = TokenValidator(
                apps: Dictionary(configuration.apps.map { ($0.bundleId, $0.appAppleId) }) { first, _ in first }
            )
            let now = Clock.system.nowMilliseconds()
            if let rejection = validator.validate(token, queryBundleId: nil, nowMilliseconds: now) {
                CommandLineInterface.printOutput("verdict: invalid (\(rejection.code)): \(rejection.message)\n")
                return 1
            }
            let purchases =
                token.acceptsPurchases(atMilliseconds: now) ? "accepts new purchases" : "expired for new purchases"
            CommandLineInterface.printOutput("verdict: valid; \(purchases)\n")
            return 0
        }
    }
}
