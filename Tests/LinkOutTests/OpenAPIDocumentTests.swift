import Domain
import Foundation
import HTTPServer
import Payments
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// `Public/openapi.json` against the server: the document lists exactly the routes the router answers (less the
/// HTML pages), and `GET /openapi.json` serves it.
@Suite("OpenAPI document")
struct OpenAPIDocumentTests {
    struct Operation: Hashable, CustomStringConvertible {
        var method: String
        var path: String
        var description: String { "\(method) \(path)" }
    }

    /// Routes that answer HTML (or files) for people and browsers, not the JSON API: left out of the document.
    static let pageRoutes: Set<Operation> = [
        // The StoreKit redirect target (`landing.paths`; the default one).
        Operation(method: "GET", path: "/"),
        // The checkout page, its form post, the result page and the result's QR code (SVG).
        Operation(method: "GET", path: "/checkout/{id}"),
        Operation(method: "POST", path: "/checkout/{id}"),
        Operation(method: "GET", path: "/checkout/{id}/done"),
        Operation(method: "GET", path: "/checkout/{id}/qr.svg"),
        Operation(method: "GET", path: "/pay/return"),
        // The demo provider's payment page and its form post.
        Operation(method: "GET", path: "/pay/demo/{intentId}"),
        Operation(method: "POST", path: "/pay/demo/{intentId}"),
        // The operator dashboard: pages, sign-in and sign-out forms, the chart (signed-in session, not bearer).
        Operation(method: "GET", path: "/admin"),
        Operation(method: "POST", path: "/admin/login"),
        Operation(method: "POST", path: "/admin/logout"),
        Operation(method: "GET", path: "/admin/chart.svg"),
        Operation(method: "GET", path: "/admin/find"),
        Operation(method: "GET", path: "/admin/detail"),
        Operation(method: "GET", path: "/admin/money"),
        Operation(method: "GET", path: "/admin/money/chart.svg"),
        // Files from `Public/`.
        Operation(method: "GET", path: "/static/{path...}"),
        Operation(method: "GET", path: "/favicon.ico"),
        Operation(method: "GET", path: "/apple-touch-icon.png"),
    ]

    static let methods: Set<String> = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

    static func document() throws -> [String: Any] {
        let url = LiveApplication.repositoryRoot.appendingPathComponent("Public/openapi.json")
        return try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
    }

    static func documentedOperations(_ document: [String: Any]) throws -> Set<Operation> {
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        var operations: Set<Operation> = []
        for (path, item) in paths {
            for method in item.keys where methods.contains(method) {
                operations.insert(Operation(method: method.uppercased(), path: path))
            }
        }
        return operations
    }

    /// The router's routes with every optional one on: the demo provider's pages in one configuration, Stripe's
    /// in the other (the two providers exclude each other).
    static func routerOperations() throws -> Set<Operation> {
        var operations: Set<Operation> = []
        for provider in [ProviderID.demo, .stripe] {
            let live = try LiveApplication { configuration in
                configuration.payments.provider = provider
                configuration.payments[.stripe, "secretKey"] = "sk_test_drift"
                configuration.payments[.stripe, "webhookSecret"] = "whsec_drift"
                configuration.payments[.stripe, "apiBase"] = "http://127.0.0.1:9"
            }
            for route in live.application.routeRegistrations {
                operations.insert(Operation(method: route.method, path: route.pattern))
            }
        }
        return operations
    }

    @Test func documentsExactlyTheRoutersJSONRoutes() throws {
        let routed = try Self.routerOperations()
        #expect(routed.contains(Operation(method: "POST", path: "/webhooks/{provider}")))
        #expect(routed.contains(Operation(method: "GET", path: "/pay/demo/{intentId}")))
        let api = routed.subtracting(Self.pageRoutes)
        let documented = try Self.documentedOperations(Self.document())
        let undocumented = api.subtracting(documented).map(\.description).sorted()
        let stale = documented.subtracting(api).map(\.description).sorted()
        #expect(undocumented.isEmpty, "routes the document does not describe: \(undocumented)")
        #expect(stale.isEmpty, "documented operations no route answers: \(stale)")
        // Every page route listed as left out must still exist, or the list hides a removed route.
        let missingPages = Self.pageRoutes.subtracting(routed).map(\.description).sorted()
        #expect(missingPages.isEmpty, "page routes the router no longer has: \(missingPages)")
    }

    @Test func documentIsOpenAPI31WithTheSecuritySchemesAndEntitlementWebhooks() throws {
        let document = try Self.document()
        #expect(document["openapi"] as? String == "3.1.0")
        let components = try #require(document["components"] as? [String: Any])
        let schemes = try #require(components["securitySchemes"] as? [String: [String: Any]])
        #expect(schemes["apiToken"]?["scheme"] as? String == "bearer")
        #expect(schemes["adminToken"]?["scheme"] as? String == "bearer")
        let webhooks = try #require(document["webhooks"] as? [String: Any])
        #expect(
            Set(webhooks.keys)
                == Set(
                    [
                        EntitlementEvents.Kind.purchaseCompleted, .subscriptionRenewed, .purchaseRefunded,
                        .purchaseReinstated, .subscriptionEnded,
                    ].map(\.rawValue)
                )
        )
    }

    /// The webhook bodies linkout sends have the documented keys: none the document lacks, every one it requires.
    @Test func entitlementEventBodiesMatchTheDocumentedKeys() throws {
        let live = try LiveApplication()
        let events = EntitlementEvents(
            identifiers: Identifiers(secret: "drift"),
            ledger: live.application.ledger,
            webhooksEnabled: true,
            codeLifetimeMilliseconds: 60_000
        )
        let schemas = try #require((try Self.document()["components"] as? [String: Any])?["schemas"] as? [String: Any])
        let event = try #require(schemas["EntitlementEvent"] as? [String: Any])
        let purchaseSchema = try #require((event["properties"] as? [String: Any])?["purchase"] as? [String: Any])
        let bare = PurchaseRecord(
            purchaseId: "cs_bare",
            provider: .demo,
            checkoutId: nil,
            externalPurchaseId: nil,
            bundleId: nil,
            productId: nil,
            kind: .oneTime,
            status: .paid,
            currency: "EUR",
            amountTotal: 2999,
            amountTax: 479,
            taxCountry: "DEU",
            subscriptionId: nil,
            buyLineItemId: nil,
            periodEnd: nil,
            paidDays: 0,
            createdAt: 1,
            updatedAt: 1,
            live: false
        )
        var full = bare
        full.purchaseId = "cs_full"
        full.provider = ProviderID("stripe")
        full.externalPurchaseId = "00000000-0000-0000-0000-000000000000"
        full.bundleId = "com.example"
        full.productId = "pro.monthly"
        full.kind = .subscription
        full.periodEnd = 2_000_000
        for purchase in [bare, full] {
            let delivery = try #require(
                try events.event(.purchaseCompleted, purchase: purchase, cause: "x", at: 1000).first
            )
            let body = try #require(try JSONSerialization.jsonObject(with: Data(delivery.body.utf8)) as? [String: Any])
            try Self.expectKeys(of: body, match: event, purchase.purchaseId)
            try Self.expectKeys(
                of: try #require(body["purchase"] as? [String: Any]),
                match: purchaseSchema,
                purchase.purchaseId
            )
        }
    }

    static func expectKeys(of object: [String: Any], match schema: [String: Any], _ context: String) throws {
        let properties = Set(try #require(schema["properties"] as? [String: Any]).keys)
        let required = Set(schema["required"] as? [String] ?? [])
        let keys = Set(object.keys)
        #expect(
            keys.subtracting(properties).isEmpty,
            "\(context): undocumented \(keys.subtracting(properties).sorted())"
        )
        #expect(required.subtracting(keys).isEmpty, "\(context): missing \(required.subtracting(keys).sorted())")
    }

    @Test func servedAtOpenAPIJSONAsLoadedAtStartUp() throws {
        let live = try LiveApplication()
        let response = try live.get("/openapi.json")
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == "application/json")
        #expect(response.header("Cache-Control")?.contains("max-age") == true)
        let file = try Data(
            contentsOf: LiveApplication.repositoryRoot.appendingPathComponent("Public/openapi.json")
        )
        #expect(Data(response.body) == file)
        #expect(try live.get("/openapi.json", method: "HEAD").status == 200)
    }

    @Test func aMissingDocumentStopsStartUp() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-openapi-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(throws: ConfigurationError.self) { try OpenAPIRoute(publicDir: folder.path) }
        try Data("[1, 2]".utf8).write(to: folder.appendingPathComponent("openapi.json"))
        #expect(throws: ConfigurationError.self) { try OpenAPIRoute(publicDir: folder.path) }
    }

    @Test func aLandingPathMayNotShadowTheDocument() throws {
        let text = #"{"landing": {"paths": ["/openapi.json"]}}"#
        #expect(throws: ConfigurationError(field: "landing.paths[0]", problem: "is used by linkout itself")) {
            try Configuration.parse(Data(text.utf8))
        }
    }
}
