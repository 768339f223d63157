import Domain
import ExternalPurchase
import Foundation
import Testing

@testable import LinkOut
@testable import Storage

/// The JSON bodies the API answers against `Public/openapi.json`: each type, fully populated (every optional
/// set), encoded as `JSONResponse` encodes it, has exactly the keys its schema lists, at every level. A field
/// added to a type fails here until the document describes it; a property the server no longer sends fails too.
extension OpenAPIDocumentTests {
    /// Each reply type with every optional set, and the schema that documents it.
    enum Populated {
        static let token = StoredToken(
            token: ExternalPurchaseToken(
                appAppleId: 1,
                bundleId: "com.example",
                tokenCreationDate: 1,
                externalPurchaseId: "00000000-0000-0000-0000-000000000001",
                tokenType: "ACQUISITION",
                tokenExpirationDate: 2
            ),
            source: .url,
            appAccountToken: "00000000-0000-0000-0000-000000000002",
            firstSeenAt: 1,
            lastSeenAt: 2,
            visitCount: 1,
            checkoutId: "c1"
        )

        static var report: StoredReport {
            var report = StoredReport(
                requestIdentifier: "r1",
                externalPurchaseId: token.token.externalPurchaseId,
                environment: .sandbox,
                bundleId: "com.example",
                status: .lineItem,
                body: "{}",
                state: .rejected,
                attempts: 1,
                nextAttemptAt: 3,
                createdAt: 1
            )
            report.lastAttemptAt = 2
            report.lastHTTPStatus = 400
            report.lastResponse = "{}"
            report.acceptedAt = 2
            return report
        }

        static let lineItem = StoredLineItem(
            rowId: 1,
            externalPurchaseId: token.token.externalPurchaseId,
            lineItemId: "li1",
            body: "{}",
            receivedAt: 1,
            reportRequestIdentifier: "r1",
            awaitingTokenSince: 1,
            correction: "message",
            correctedAt: 2
        )

        static let revenue = RevenueReport(
            days: [
                MoneyDay(
                    day: 20_400,
                    bundleId: "com.example",
                    environment: .production,
                    provider: "stripe",
                    productId: "pro",
                    taxCountry: "DEU",
                    pricingCurrency: "EUR",
                    reportingCurrency: "EUR",
                    sales: 1,
                    salesAmount: 2990,
                    salesTax: 477,
                    salesPricing: 2990,
                    refunds: 0,
                    refundsAmount: 0,
                    refundsTax: 0,
                    refundsPricing: 0,
                    commission: 377,
                    commissionable: 1
                )
            ],
            firstDay: 20_400,
            lastDay: 20_400,
            by: .day,
            regimes: CommissionRegime.builtIn.filter { $0.id == "eu-2026-10" }
        )

        static let purchase = PurchaseRecord(
            purchaseId: "cs_1",
            provider: ProviderID("stripe"),
            checkoutId: "c1",
            externalPurchaseId: token.token.externalPurchaseId,
            bundleId: "com.example",
            productId: "pro.monthly",
            kind: .subscription,
            status: .paid,
            currency: "EUR",
            amountTotal: 2999,
            amountTax: 479,
            taxCountry: "DEU",
            subscriptionId: "sub_1",
            buyLineItemId: "li1",
            periodEnd: 2,
            paidDays: 30,
            createdAt: 1,
            updatedAt: 2,
            live: true
        )

        static let paymentSession = PaymentSessionRecord(
            sessionId: "s1",
            provider: ProviderID("stripe"),
            intentId: "i1",
            checkoutId: "c1",
            externalPurchaseId: token.token.externalPurchaseId,
            productId: "pro.monthly",
            currency: "EUR",
            amount: "29.99",
            language: "en",
            url: "https://example.com/pay",
            state: .complete,
            createdAt: 1,
            updatedAt: 2,
            browserHash: "h"
        )

        static let redemptionPurchase = RedemptionAPI.PurchaseView(
            purchaseId: "cs_1",
            productId: "pro.monthly",
            kind: .subscription,
            status: "paid",
            externalPurchaseId: token.token.externalPurchaseId,
            bundleId: "com.example",
            appAccountToken: "00000000-0000-0000-0000-000000000002",
            currentPeriodEnd: 2,
            currency: "EUR",
            amountTotal: 2999,
            purchasedAt: 1,
            test: false
        )

        static let credential = CustomerCredential(
            id: "cred_x",
            bundleId: "com.example",
            appAccountToken: "00000000-0000-0000-0000-000000000002",
            createdAt: 1,
            revokedAt: 2,
            replacedBy: "cred_y",
            purchaseIds: ["p1"]
        )

        static var auditEntry: AuditEntry {
            var entry = AuditEntry(
                at: 1,
                actor: "admin:x",
                origin: "127.0.0.1",
                action: "report.resend",
                subject: "t",
                before: "b",
                after: "a"
            )
            entry.id = 2
            return entry
        }

        static let signingKey = AppAccessAdminAPI.KeyView(
            SigningKeyRecord(kid: "k", publicJWK: "{}", privateKeyPEM: "pem", createdAt: 1, signsFrom: 1, retiredAt: 2)
        )

        static let signedEntitlement = SignedEntitlement(
            iss: "https://pay.example.com",
            aud: "com.example",
            sub: "p1",
            iat: 1,
            exp: 2,
            productId: "pro.monthly",
            kind: .subscription,
            environment: "sandbox",
            test: true,
            purchaseDate: 1,
            expiresDate: 2,
            appAccountToken: "00000000-0000-0000-0000-000000000002"
        )

        static let appEntitlements = AppAccessAPI.Entitlements(
            credentialId: "cred_x",
            entitlements: [.init(purchaseId: "p1", productId: "pro", expiresDate: 2, entitlement: "a.b.c")],
            ended: [.init(purchaseId: "p2", productId: "pro", reason: "refunded")]
        )

        static func bodies() -> [(schema: String, value: any Encodable)] {
            let attention = AttentionEntry(
                externalPurchaseId: token.token.externalPurchaseId,
                tokenCreationDate: 1,
                tokenExpirationDate: 2,
                report: report,
                lineItems: [lineItem]
            )
            let appleState = AdminAPI.AppleLineItemState(
                lineItemId: "li1",
                requestIdentifier: "r1",
                state: "held",
                reason: "waiting for an exchange rate"
            )
            let delivery = WebhookDelivery(
                eventId: "e1",
                purchaseId: "cs_1",
                sequence: 1,
                type: "purchase.completed",
                body: "{}",
                state: .failed,
                attempts: 1,
                nextAttemptAt: 3,
                createdAt: 1,
                lastAttemptAt: 2,
                lastStatus: 500,
                lastError: "error",
                deliveredAt: 2
            )
            // Fully populated: a count for every state (a state with none is left out).
            let counts = Dictionary(
                uniqueKeysWithValues: WebhookState.allCases.map { ($0.rawValue, Int64(1)) }
            )
            let detail = AdminAPI.TokenDetail(
                token: token,
                visits: [VisitRow(visitedAt: 1, landingPath: "/", checkoutId: "c1", utm: ["utm_source": "x"])],
                checkoutIntents: [
                    CheckoutIntentRow(
                        checkoutId: "c1",
                        productId: "pro.monthly",
                        currency: "EUR",
                        amount: "29.99",
                        createdAt: 1
                    )
                ],
                lineItems: [lineItem],
                reports: [report],
                paymentSessions: [paymentSession],
                purchases: [purchase]
            )
            return [
                ("StoredToken", token),
                ("StoredReport", report),
                ("StoredLineItem", lineItem),
                ("AttentionEntry", attention),
                ("ReportList", AdminAPI.ReportList(reporting: "running", reports: [report], attention: [attention])),
                ("TokenDetail", detail),
                (
                    "TokenPage",
                    AdminAPI.TokenPage(tokens: [token], limit: 1, offset: 0, nextOffset: 1, nextAfter: "1:abc")
                ),
                ("PurchaseRecord", purchase),
                ("AppleLineItemState", appleState),
                (
                    "PurchasePage",
                    AdminAPI.PurchasePage(
                        purchases: [AdminAPI.PurchaseView(purchase: purchase, appleLineItems: [appleState])],
                        limit: 1,
                        offset: 0,
                        nextOffset: 1
                    )
                ),
                ("WebhookDelivery", delivery),
                ("WebhookList", AdminAPI.WebhookList(counts: counts, webhooks: [delivery])),
                ("AppleCopy", AdminAPI.AppleCopy(requestIdentifier: "r1", appleStatus: 200, appleBody: "{}")),
                ("Purchase", redemptionPurchase),
                ("Redeemed", RedemptionAPI.Redeemed(purchase: redemptionPurchase, redeemedAt: 1)),
                (
                    "RedemptionRefusal",
                    RedemptionAPI.Refusal(
                        error: .init(code: "already_redeemed", message: "m", at: 1),
                        purchase: redemptionPurchase
                    )
                ),
                ("PurchaseList", RedemptionAPI.PurchaseList(purchases: [redemptionPurchase])),
                (
                    "AppRedeemed",
                    AppAccessAPI.Redeemed(
                        purchase: redemptionPurchase,
                        redeemedAt: 1,
                        entitlement: "a.b.c",
                        credential: "lcr_x",
                        credentialId: "cred_x"
                    )
                ),
                ("AppEntitlements", appEntitlements),
                ("SignedEntitlement", signedEntitlement),
                ("JWKS", AppAccessAPI.KeySet(keys: [PublicJWK(x: "x", y: "y", kid: "k")])),
                ("CustomerCredential", credential),
                ("CredentialList", AppAccessAdminAPI.CredentialList(credentials: [credential])),
                ("ReissuedCredential", AppAccessAdminAPI.Reissued(credential: credential, secret: "lcr_x")),
                ("SigningKey", signingKey),
                ("SigningKeyList", AppAccessAdminAPI.KeyList(keys: [signingKey])),
                ("AuditPage", AdminAPI.AuditPage(entries: [auditEntry], nextBefore: 1)),
                (
                    "TokenForwarded",
                    TokenAPI.Reply(
                        externalPurchaseId: token.token.externalPurchaseId,
                        environment: .sandbox,
                        checkoutURL: "https://example.com/checkout/c1"
                    )
                ),
                ("LineItemsAccepted", LineItemsAPI.Accepted(externalPurchaseId: "x", accepted: 1, unchanged: 0)),
                ("Problems", LineItemsAPI.Problems(errors: [ReportProblem("Name", field: "f", lineItem: "li1", "m")])),
                ("Error", JSONResponse.ErrorBody(error: .init(code: "c", message: "m"))),
                ("RevenueReport", revenue),
                ("RevenueRow", revenue.rows[0]),
                ("RevenueTotal", revenue.totals[0]),
                ("CloseReport", OpenAPIDocumentTests.closeReport()),
                (
                    "ActionOutcome",
                    ReportActions.Outcome(
                        externalPurchaseId: "x",
                        action: "resend",
                        detail: "the rejected report is due"
                    )
                ),
            ]
        }
    }

    /// A close report with every optional field set.
    static func closeReport() -> CloseReport {
        let counts = CloseReport.Counts(
            CloseCounts(
                total: 3,
                outstanding: Dictionary(uniqueKeysWithValues: CloseItem.State.allCases.map { ($0, 1) })
            )
        )
        return CloseReport(
            month: "2026-11",
            environment: "production",
            state: .closing,
            monthStart: "2026-11-01T00:00:00Z",
            monthEnd: "2026-12-01T00:00:00Z",
            deadline: "2026-12-15T00:00:00Z",
            secondsToDeadline: 1,
            tokens: counts,
            lineItems: counts,
            pendingPaymentEvents: 1,
            outstanding: 2,
            totals: CloseTotals(
                currencies: [.init(reportingCurrency: "EUR", sales: 1, refunds: 1, tax: 1, netTaxExclusive: 1)],
                commissionEstimate: ["EUR": 1],
                source: "s"
            ),
            outstandingList: [
                .init(
                    kind: "line_item",
                    externalPurchaseId: "x",
                    lineItemId: "li1",
                    date: "2026-11-02T00:00:00Z",
                    state: "held",
                    reason: "r",
                    action: "a"
                )
            ],
            outstandingNotListed: 1
        )
    }

    @Test func everyBodyHasExactlyItsSchemasProperties() throws {
        let document = try OpenAPIDocumentTests.document()
        let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: Any])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        for (name, value) in Populated.bodies() {
            guard let schema = schemas[name] as? [String: Any] else {
                Issue.record("the document has no schema \(name)")
                continue
            }
            let json = try JSONSerialization.jsonObject(with: try encoder.encode(value))
            let drift = SchemaKeys(schemas: schemas).mismatches(json, schema, at: name)
            #expect(drift.isEmpty, "\(name): \(drift)")
        }
    }

    /// The comparison itself notices a property the document lacks, one it has too many, and nested ones.
    @Test func theComparisonFindsMissingAndStaleProperties() {
        let schema: [String: Any] = [
            "type": "object",
            "properties": [
                "a": ["type": "integer"], "b": ["type": "array", "items": ["$ref": "#/components/schemas/B"]],
            ],
        ]
        let keys = SchemaKeys(schemas: ["B": ["type": "object", "properties": ["c": [:], "d": [:]]]])
        #expect(keys.mismatches(["a": 1, "b": [["c": 1, "d": 2]]], schema, at: "x").isEmpty)
        #expect(keys.mismatches(["a": 1, "b": [["c": 1, "e": 2]]], schema, at: "x").count == 2)
        #expect(keys.mismatches(["a": 1, "z": 1, "b": []], schema, at: "x").count == 1)
        #expect(keys.mismatches(["b": []], schema, at: "x").count == 1)
        #expect(keys.mismatches("held", ["enum": ["pending"]], at: "x").count == 1)
    }
}
