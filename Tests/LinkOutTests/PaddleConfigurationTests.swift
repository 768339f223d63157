import Domain
import Foundation
import Lifecycle
import Payments
import Testing

@testable import LinkOut

/// `payments.provider: "paddle"` and `payments.paddle`, with its environment variables and secret files.
@Suite("Paddle configuration")
struct PaddleConfigurationTests {
    @Test func aSandboxKeyFromAFileMakesATestModeProviderOnTheSandboxHost() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-paddle-\(UUID())")
        try Data("pdl_sdbx_apikey_01abc_secretpart\n".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var configuration = try Configuration.parse(
            Data(
                #"{"payments": {"provider": "paddle", "paddle": {"checkoutURL": "https://sandbox-pay.paddle.io/hsc_01x", "priceIds": {"pro.monthly": "pri_01monthly"}}}}"#
                    .utf8
            )
        )
        try configuration.apply(
            environment: [
                "LINKOUT_PADDLE_API_KEY_FILE": file.path, "LINKOUT_PADDLE_WEBHOOK_SECRET": "pdl_ntfset_01x_y",
            ]
        )
        let provider = try #require(try configuration.payments.makeProvider(clock: .system) as? PaddlePaymentProvider)
        #expect(provider.id == .paddle)
        #expect(provider.mode == .test)
        #expect(provider.configuration.apiBase == "https://sandbox-api.paddle.com")
        #expect(provider.configuration.priceIds == ["pro.monthly": "pri_01monthly"])
        #expect(provider.pageTexts.checkoutNote == "checkout_provider_paddle_test")
        #expect(!"\(provider.configuration)".contains("secretpart"))
        // A price id for a product the catalog does not have (a typo) sold that product at linkout's price.
        configuration.catalog.append(
            Product(id: "pro.monthly", kind: .oneTime, names: ["en": "Pro"], prices: [:], interval: nil)
        )
        try configuration.validateProvider()
        configuration.payments.providers[.paddle]?["priceIds.pro.lifetme"] = "pri_01typo"
        let refused = #expect(throws: ConfigurationError.self) { try configuration.validateProvider() }
        #expect(refused?.field == "payments.paddle.priceIds")
        #expect(refused?.problem == "names pro.lifetme, which is no product of the catalog")
    }

    /// The server stops at start (exit 2) naming the first key it lacks.
    @Test func aMissingKeyIsNamed() throws {
        for (block, field) in [
            (#"{}"#, "payments.paddle.apiKey"),
            (#"{"apiKey": "pdl_live_apikey_01x_y"}"#, "payments.paddle.checkoutURL"),
            (
                #"{"apiKey": "pdl_live_apikey_01x_y", "checkoutURL": "https://pay.example.com"}"#,
                "payments.paddle.webhookSecret"
            ),
        ] {
            let configuration = try Configuration.parse(
                Data(#"{"payments": {"provider": "paddle", "paddle": \#(block)}}"#.utf8)
            )
            do {
                _ = try configuration.payments.makeProvider(clock: .system)
                Issue.record("made a provider from \(block)")
            } catch {
                #expect("\(error)".contains(field), "\(block): \(error)")
            }
        }
    }
}
