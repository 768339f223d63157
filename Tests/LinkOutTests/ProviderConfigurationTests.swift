import Domain
import Foundation
import Lifecycle
import Payments
import Testing

@testable import LinkOut

/// `payments.<id>`: each provider's block is read from the keys the provider declares, with its environment
/// variables and secret files over it, and the chosen provider is made from it at start.
@Suite("Provider configuration")
struct ProviderConfigurationTests {
    @Test func aBlockIsReadAsTheProviderDeclaresIt() throws {
        let configuration = try Configuration.parse(
            Data(
                #"{"payments": {"provider": "stripe", "stripe": {"secretKey": "sk_live_x", "webhookSecret": "whsec_x", "automaticTax": true, "webhookToleranceSeconds": 60}}}"#
                    .utf8
            )
        )
        #expect(configuration.payments.provider == .stripe)
        #expect(configuration.payments[.stripe, "automaticTax"] == "true")
        #expect(configuration.payments[.stripe, "webhookToleranceSeconds"] == "60")
        let provider = try configuration.payments.makeProvider(clock: .system)
        #expect(provider.id == .stripe)
        #expect(provider.mode == .live)
        #expect(provider.pageTexts.taxNote == .added)
        // A key the provider does not declare, or a block of a provider there is not, is refused with its field.
        for (json, field) in [
            (#"{"payments": {"stripe": {"secretKy": "sk_test_x"}}}"#, "payments.stripe"),
            (#"{"payments": {"paypal": {}}}"#, "payments"),
            (#"{"payments": {"stripe": {"apiBase": ["x"]}}}"#, "payments.stripe.apiBase"),
            // A key is text: `true` or a number is no key (it was taken as one, in test mode).
            (#"{"payments": {"stripe": {"secretKey": true}}}"#, "payments.stripe.secretKey"),
            (#"{"payments": {"stripe": {"webhookSecret": 12345678901234567}}}"#, "payments.stripe.webhookSecret"),
        ] {
            do {
                _ = try Configuration.parse(Data(json.utf8))
                Issue.record("accepted \(json)")
            } catch {
                #expect(error.field.hasPrefix(field), "\(json): \(error.field)")
            }
        }
    }

    /// A product the chosen provider cannot sell stops the start, naming the field; another provider may take it.
    @Test func theChosenProviderChecksTheCatalog() throws {
        let catalog =
            #"[{"id": "pro.fouryears", "type": "subscription", "name": {"en": "Pro"}, "price": {"EUR": "99.00"}, "interval": "year", "intervalCount": 4}]"#
        let stripe = #"{"secretKey": "sk_test_x", "webhookSecret": "whsec_x"}"#
        for (provider, refused) in [("stripe", true), ("demo", false)] {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-config-\(UUID()).json")
            try Data(
                #"{"catalog": \#(catalog), "payments": {"provider": "\#(provider)", "stripe": \#(stripe)}}"#.utf8
            ).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            do {
                let configuration = try Configuration.load(
                    overrides: Configuration.Overrides(configPath: file.path),
                    environment: [:]
                )
                #expect(!refused, "\(provider) started with a four-year subscription")
                #expect(configuration.catalog.first?.interval == BillingInterval(.year, count: 4))
            } catch {
                #expect(refused, "\(provider): \(error)")
                #expect(error.field == "catalog[0].intervalCount")
                #expect(error.problem.contains("three years"))
            }
        }
    }

    /// A price Stripe cannot charge (more than 8 digits) started the shop and failed every sale of it.
    @Test func theChosenProviderChecksEveryPrice() throws {
        let catalog = #"[{"id": "pro.big", "name": {"en": "Pro"}, "price": {"EUR": "29.99", "USD": "1234567.89"}}]"#
        let stripe = #"{"secretKey": "sk_test_x", "webhookSecret": "whsec_x"}"#
        for (provider, refused) in [("stripe", true), ("demo", false)] {
            let configuration = try Configuration.parse(
                Data(#"{"catalog": \#(catalog), "payments": {"provider": "\#(provider)", "stripe": \#(stripe)}}"#.utf8)
            )
            do {
                try configuration.validateProvider()
                #expect(!refused, "\(provider) took a price of nine digits")
            } catch {
                #expect(refused, "\(provider): \(error)")
                #expect(error.field == "catalog[0].price.USD")
                #expect(error.problem.contains("cannot be charged by Stripe"))
            }
        }
    }

    /// A price under Stripe's minimum charge (EUR 0.49, GBP 0.29, JPY 49) passed the check and failed every
    /// checkout of it at Stripe; a price of 0 is no sale with any provider.
    @Test func aPriceUnderStripesMinimumOrOfNothingIsRefused() throws {
        let stripe = #"{"secretKey": "sk_test_x", "webhookSecret": "whsec_x"}"#
        func problem(_ price: String, provider: String = "stripe") -> String? {
            let catalog = #"[{"id": "pro.tiny", "name": {"en": "Pro"}, "price": {\#(price)}}]"#
            do {
                let configuration = try Configuration.parse(
                    Data(
                        #"{"catalog": \#(catalog), "payments": {"provider": "\#(provider)", "stripe": \#(stripe)}}"#
                            .utf8
                    )
                )
                try configuration.validateProvider()
                return nil
            } catch {
                return "\(error.field): \(error.problem)"
            }
        }
        #expect(problem(#""EUR": "0.49""#)?.contains("under its minimum charge of 0.50 EUR") == true)
        #expect(problem(#""GBP": "0.29""#)?.contains("0.30 GBP") == true)
        #expect(problem(#""JPY": "49""#)?.contains("50 JPY") == true)
        #expect(problem(#""EUR": "0.50", "GBP": "0.30", "JPY": "50""#) == nil)
        #expect(problem(#""EUR": "0.49""#, provider: "demo") == nil)
        for provider in ["stripe", "demo"] {
            #expect(
                problem(#""USD": "0.00""#, provider: provider)
                    == "catalog[0].price.USD: must be more than 0: nothing can be charged"
            )
        }
    }

    /// A secret written inline and named by its file both: the file won silently, and a key rotated inline was
    /// never used. Refused, as both forms of an environment variable are.
    @Test func aSecretInlineAndInAFileIsRefused() throws {
        let cases = [
            (
                #"{"payments": {"stripe": {"secretKey": "sk_test_inline", "secretKeyFile": "/run/secrets/sk"}}}"#,
                "payments.stripe.secretKeyFile"
            ),
            (
                #"{"webhooks": {"url": "https://b.example.com/h", "secret": "s", "secretFile": "/run/secrets/w"}}"#,
                "webhooks.secretFile"
            ),
        ]
        for (json, field) in cases {
            let refused = #expect(throws: ConfigurationError.self) { try Configuration.parse(Data(json.utf8)) }
            #expect(refused?.field == field, "\(json)")
            #expect(refused?.problem.contains("set one of them") == true, "\(json)")
        }
    }

    /// The secret key (or a typo) as Stripe's webhook secret passed the check, and every event was refused as
    /// badly signed: an endpoint's signing secret is `whsec_…`.
    @Test func aStripeWebhookSecretIsAnEndpointsSigningSecret() throws {
        for (secret, taken) in [("sk_test_x", false), ("x", false), ("whsec_", false), ("whsec_abc", true)] {
            let configuration = try Configuration.parse(
                Data(
                    #"{"payments": {"provider": "stripe", "stripe": {"secretKey": "sk_test_x", "webhookSecret": "\#(secret)"}}}"#
                        .utf8
                )
            )
            do {
                try configuration.validateProvider()
                #expect(taken, "\(secret)")
            } catch {
                #expect(!taken, "\(secret): \(error)")
                #expect(error.field == "payments.stripe.webhookSecret")
                #expect(error.problem.contains("whsec_"))
            }
        }
    }

    @Test func environmentVariablesAndSecretFilesGoOverTheBlock() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-secret-\(UUID())")
        try Data("whsec_from_file\n".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var configuration = try Configuration.parse(
            Data(#"{"payments": {"stripe": {"secretKey": "sk_test_block", "webhookSecret": "whsec_block"}}}"#.utf8)
        )
        try configuration.apply(
            environment: [
                "LINKOUT_PAYMENTS_PROVIDER": "stripe", "LINKOUT_STRIPE_SECRET_KEY": "sk_test_env",
                "LINKOUT_STRIPE_WEBHOOK_SECRET_FILE": file.path,
            ]
        )
        #expect(configuration.payments.provider == .stripe)
        #expect(configuration.payments[.stripe, "secretKey"] == "sk_test_env")
        #expect(configuration.payments[.stripe, "webhookSecret"] == "whsec_from_file")
        #expect(throws: ConfigurationError.self) {
            try configuration.apply(environment: ["LINKOUT_PAYMENTS_PROVIDER": "paypal"])
        }
    }

    /// A provider may take an object of strings (a price id per product): it reads it back by name.
    @Test func anObjectOfStringsIsReadAsAMap() throws {
        let registration = ProviderRegistration(
            id: ProviderID("shop"),
            settings: [ProviderSetting("prices", isMap: true), ProviderSetting("apiKey", isSecret: true)]
        ) { _, _ in DemoPaymentProvider(publicURL: "") }
        let block = JSONFields(
            [
                "prices": .object(["pro.lifetime": .string("pri_1"), "pro.monthly": .string("pri_2")]),
                "apiKey": .string("key"),
            ],
            path: "payments.shop"
        )
        var unread: [ConfigurationError] = []
        let settings = try Configuration.Payments.settings(of: registration, from: block, unreadSecretFiles: &unread)
        #expect(settings.map("prices") == ["pro.lifetime": "pri_1", "pro.monthly": "pri_2"])
        #expect(settings.optional("apiKey") == "key")
        let wrong = JSONFields(["prices": .object(["pro.lifetime": .integer(1)])], path: "payments.shop")
        #expect(throws: ConfigurationError.self) {
            try Configuration.Payments.settings(of: registration, from: wrong, unreadSecretFiles: &unread)
        }
        // An object where the provider expects one value is refused, never taken and left unread.
        let notAMap = JSONFields(["apiKey": .object(["a": .string("b")])], path: "payments.shop")
        #expect(throws: ConfigurationError.self) {
            try Configuration.Payments.settings(of: registration, from: notAMap, unreadSecretFiles: &unread)
        }
    }
}
