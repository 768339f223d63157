import Crypto
import Domain
import Foundation
import Testing

@testable import ExternalPurchase

@Suite("Report models and Apple's rules")
struct ReportModelTests {
    /// Apple's example report bodies ("Reporting tokens with transactions", "Reporting unrecognized tokens and tokens
    /// without transactions"), verbatim; the refund example gets the comma Apple's page lacks.
    static let oneTimeBuy =
        #"{"requestIdentifier":"1cdc286e-7389-417c-b58f-7a7d196e5bbe","externalPurchaseId":"2924c319-5205-4188-831a-1ca2c00326b4","status":"LINE_ITEM","lineItems":[{"lineItemId":"aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa","creationDate":1706047472367,"eventType":"BUY","productType":"ONE_TIME_BUY","productIdentifier":"example.one-time-buy.product","amountTaxInclusive":10000,"amountTaxExclusive":8000,"taxAmount":2000,"netAmountTaxExclusive":8000,"reportingCurrency":"EUR","pricingCurrency":"EUR","taxCountry":"ESP","quantity":6}]}"#
    static let subscriptionStart =
        #"{"requestIdentifier":"c4dcf1a5-afac-4e2c-83d7-280f9f2cb832","externalPurchaseId":"59908800-c9d3-40c3-b638-8a9c5a535654","status":"LINE_ITEM","lineItems":[{"lineItemId":"cccccccc-cccc-cccc-cccc-cccccccccccc","creationDate":1706047488039,"eventType":"BUY","productType":"SUBSCRIPTION","productIdentifier":"example.subscription.monthly","amountTaxInclusive":10000,"amountTaxExclusive":8000,"taxAmount":2000,"netAmountTaxExclusive":8000,"reportingCurrency":"EUR","pricingCurrency":"EUR","taxCountry":"ESP","subscriptionEvent":"SUBSCRIPTION_START","subscriptionStartDate":1706047488039,"subscriptionEndDate":1708639488039,"subscriptionDaysOfPaidService":0,"quantity":1}]}"#
    static let renewal =
        #"{"requestIdentifier":"446fdfd8-2c06-4956-873c-8c449a9d61f5","externalPurchaseId":"59908800-c9d3-40c3-b638-8a9c5a535654","status":"LINE_ITEM","lineItems":[{"lineItemId":"dddddddd-dddd-dddd-dddd-dddddddddddd","creationDate":1708639488039,"eventType":"BUY","productType":"SUBSCRIPTION","productIdentifier":"example.subscription.monthly","amountTaxInclusive":10000,"amountTaxExclusive":8000,"taxAmount":2000,"netAmountTaxExclusive":8000,"reportingCurrency":"EUR","pricingCurrency":"EUR","taxCountry":"ESP","subscriptionEvent":"RENEWAL","subscriptionStartDate":1708639488039,"subscriptionEndDate":1711231488039,"subscriptionDaysOfPaidService":30,"referenceLineItemId":"cccccccc-cccc-cccc-cccc-cccccccccccc","quantity":1}]}"#
    static let refund =
        #"{"requestIdentifier":"b598cbea-c0a8-44cb-bb0e-abb12ed59cb9","externalPurchaseId":"2924c319-5205-4188-831a-1ca2c00326b4","status":"LINE_ITEM","lineItems":[{"lineItemId":"bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb","creationDate":1706047491127,"eventType":"REFUND","amountTaxInclusive":2500,"amountTaxExclusive":2000,"taxAmount":500,"netAmountTaxExclusive":6000,"reportingCurrency":"EUR","pricingCurrency":"EUR","taxCountry":"ESP","referenceLineItemId":"aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"}]}"#
    static let noLineItem =
        #"{"requestIdentifier":"87e7d6d1-b98d-4a8f-b6a4-41ba992a6cad","externalPurchaseId":"e","status":"NO_LINE_ITEM"}"#
    static let unrecognized =
        #"{"requestIdentifier":"94d0d7fb-c393-4813-92eb-9614e7540f6d","externalPurchaseId":"e","status":"UNRECOGNIZED_TOKEN"}"#
    static let duplicate =
        #"{"requestIdentifier":"e1db8b5e-cbd2-4fe6-ae2b-d92ba5b12c41","externalPurchaseId":"e","status":"DUPLICATE_TOKEN"}"#

    /// 2026-01-01: Apple's examples (January 2024) are then within the three years Apple accepts.
    static let now: Int64 = 1_767_225_600_000

    func object(_ json: some DataProtocol) throws -> NSDictionary {
        try #require(try JSONSerialization.jsonObject(with: Data(json)) as? NSDictionary)
    }

    @Test(arguments: [oneTimeBuy, subscriptionStart, renewal, refund, noLineItem, unrecognized, duplicate])
    func applesExampleBodiesRoundTrip(json: String) throws {
        let report = try JSONDecoder().decode(ExternalPurchaseReport.self, from: Data(json.utf8))
        let encoded = try JSONEncoder().encode(report)
        #expect(try object(encoded) == object(Data(json.utf8)))
    }

    func report(_ json: String) throws -> ExternalPurchaseReport {
        try JSONDecoder().decode(ExternalPurchaseReport.self, from: Data(json.utf8))
    }

    @Test func applesExamplesFollowApplesRules() throws {
        let validator = ReportValidator(token: nil, now: Self.now)
        #expect(validator.problems(in: try report(Self.oneTimeBuy)) == [])
        #expect(validator.problems(in: try report(Self.subscriptionStart)) == [])
        #expect(validator.problems(in: try report(Self.renewal)) == [])
        let buy = try #require(try report(Self.oneTimeBuy).lineItems)
        let afterBuy = ReportValidator(token: nil, earlierLineItems: buy, now: Self.now)
        #expect(afterBuy.problems(in: try report(Self.refund)) == [])
        #expect(validator.problems(in: try report(Self.refund)).map(\.name) == ["NotFoundError"])
    }

    func problems(_ change: (inout OneTimeBuyLineItem) -> Void, status: ReportStatus = .lineItem)
        throws -> [String]
    {
        guard case .oneTimeBuy(var item) = try #require(try report(Self.oneTimeBuy).lineItems?.first) else {
            return ["not a one-time buy"]
        }
        change(&item)
        let changed = ExternalPurchaseReport(
            requestIdentifier: "1cdc286e-7389-417c-b58f-7a7d196e5bbe",
            externalPurchaseId: "e",
            status: status,
            lineItems: [.oneTimeBuy(item)]
        )
        return ReportValidator(token: nil, now: Self.now).problems(in: changed).map(\.name)
    }

    /// Amounts and dates come from the developer's backend: sums past Int64's limits are named problems, never
    /// an overflow that stops the server.
    @Test func amountsAndDatesAtInt64sLimitsAreProblemsNotOverflows() throws {
        #expect(
            try problems {
                $0.amountTaxExclusive = .max; $0.taxAmount = 1; $0.amountTaxInclusive = 1
            }.contains("IncorrectAmountTaxInclusiveError")
        )
        guard case .oneTimeBuy(var buy) = try #require(try report(Self.oneTimeBuy).lineItems?.first) else {
            Issue.record("not a one-time buy")
            return
        }
        buy.creationDate = .max
        buy.amountTaxExclusive = .min
        let afterBuy = ReportValidator(token: nil, earlierLineItems: [.oneTimeBuy(buy)], now: Self.now)
        let names = afterBuy.problems(in: try report(Self.refund)).map(\.name)
        #expect(names.contains("IncorrectAmountTaxInclusiveError"))
    }

    /// A period sent in seconds (a backend's mistake) would reach Apple as one in January 1970; a date at Int64's
    /// limits is a problem, not an overflow.
    @Test func aSubscriptionPeriodFarFromItsItemIsRefused() throws {
        guard case .subscriptionBuy(let start) = try #require(try report(Self.subscriptionStart).lineItems?.first)
        else {
            Issue.record("not a subscription item")
            return
        }
        func problems(_ change: (inout SubscriptionBuyLineItem) -> Void) -> [String] {
            var item = start
            change(&item)
            return ReportValidator(token: nil, now: Self.now).subscriptionProblems(item).map(\.name)
        }
        #expect(problems { _ in } == [])
        #expect(
            problems {
                $0.subscriptionStartDate /= 1000; $0.subscriptionEndDate /= 1000
            } == ["SubscriptionPeriodOutOfRangeError"]
        )
        #expect(problems { $0.subscriptionEndDate = .max } == ["SubscriptionPeriodOutOfRangeError"])
        #expect(
            problems {
                $0.creationDate = .max; $0.subscriptionStartDate = .min
            } == ["SubscriptionPeriodOutOfRangeError"]
        )
        // A three-year plan (Stripe's longest) with a 29 February in it, dated at its start.
        #expect(
            problems {
                $0.subscriptionStartDate = $0.creationDate
                $0.subscriptionEndDate = $0.creationDate + 1_096 * 86_400_000
            } == []
        )
    }

    @Test func eachBrokenRuleIsNamedLikeApplesError() throws {
        #expect(try problems { $0.amountTaxInclusive = 9999 } == ["IncorrectAmountTaxInclusiveError"])
        #expect(
            try problems {
                $0.taxAmount = -1; $0.amountTaxInclusive = 7999
            } == ["NegativeValueNotAllowedError"]
        )
        #expect(try problems { $0.taxCountry = "ES" } == ["UnknownEnumError"])
        #expect(try problems { $0.reportingCurrency = "XXX" } == ["UnknownEnumError"])
        #expect(try problems { $0.reportingCurrency = "USD" } == ["ReportingCurrencyExchangeNotAllowedError"])
        #expect(try problems { $0.exchangeRate = DecimalNumber("1.1") } == ["FieldNotAllowedError"])
        #expect(
            try problems {
                $0.pricingCurrency = "ISK"; $0.exchangeRate = nil
            }.contains("OmittedFieldError")
        )
        #expect(
            try problems {
                $0.pricingCurrency = "ISK"; $0.exchangeRate = DecimalNumber("0.0067")
            } == []
        )
        #expect(try problems { $0.quantity = 0 } == ["PositiveValueRequiredError"])
        #expect(try problems { $0.netAmountTaxExclusive = 7000 } == ["IncorrectNetAmountError"])
        #expect(try problems { $0.erroneouslySubmitted = true } == ["ErroneouslySubmittedNotRestatementError"])
        #expect(try problems { $0.creationDate = Self.now + 3_600_000 } == ["FutureDateError"])
        #expect(try problems { $0.creationDate = Self.now - 4 * 365 * 86_400_000 } == ["DateTooFarInPastError"])
        #expect(
            try problems { $0.lineItemId = LineItemID(String(repeating: "x", count: 129)) } == [
                "MaximumLengthExceededError"
            ]
        )
        // A control character went to Apple whole and was cut short in every view of the ledger.
        #expect(try problems { $0.productIdentifier = "pro\u{0}x" } == ["InvalidCharacterError"])
        // Apple gives no unit for its lengths: counted in UTF-8 bytes (the strictest reading).
        #expect(
            try problems { $0.productIdentifier = String(repeating: "é", count: 129) } == [
                "MaximumLengthExceededError"
            ]
        )
        #expect(try problems({ _ in }, status: .noLineItem) == ["LineItemsNotAllowedForStatusError"])
        let empty = ExternalPurchaseReport(
            requestIdentifier: RequestIdentifier(UUID().uuidString),
            externalPurchaseId: "e",
            status: .lineItem
        )
        #expect(
            ReportValidator(token: nil, now: Self.now).problems(in: empty).map(\.name) == [
                "MissingLineItemsForStatusError"
            ]
        )
    }

    @Test func refundsMustMatchTheirBuy() throws {
        let buy = try #require(try report(Self.oneTimeBuy).lineItems)
        guard case .refund(var refund) = try #require(try report(Self.refund).lineItems?.first) else { return }
        let validator = ReportValidator(token: nil, earlierLineItems: buy, now: Self.now)
        var wrong = refund
        wrong.taxCountry = "FRA"
        #expect(validator.problems(in: [.refund(wrong)]).map(\.name) == ["TaxCountryMismatchError"])
        wrong = refund
        wrong.netAmountTaxExclusive = 8000
        #expect(validator.problems(in: [.refund(wrong)]).map(\.name) == ["IncorrectNetAmountError"])
        wrong = refund
        wrong.quantity = 1
        #expect(validator.problems(in: [.refund(wrong)]).map(\.name) == ["FieldNotAllowedError"])
        refund.referenceLineItemId = refund.lineItemId
        #expect(validator.problems(in: [.refund(refund)]).map(\.name) == ["SelfReferenceError"])
    }

    @Test func duplicateTokenStatusIsOnlyForCustomLinkTokens() throws {
        let linkOut = ExternalPurchaseToken(appAppleId: 1, bundleId: "a", tokenCreationDate: 1, externalPurchaseId: "e")
        var services = linkOut
        services.tokenType = "SERVICES"
        let duplicate = try report(Self.duplicate)
        #expect(
            ReportValidator(token: linkOut, now: Self.now).problems(in: duplicate).map(\.name) == [
                "DuplicateTokenStatusNotAllowedError"
            ]
        )
        #expect(ReportValidator(token: services, now: Self.now).problems(in: duplicate) == [])
    }

    @Test func lineItemsOutsideACustomLinkTokensActivePeriodAreRefused() throws {
        let token = ExternalPurchaseToken(
            appAppleId: 1,
            bundleId: "a",
            tokenCreationDate: 1_706_047_000_000,
            externalPurchaseId: "e",
            tokenType: "SERVICES",
            tokenExpirationDate: 1_706_047_400_000
        )
        let items = try #require(try report(Self.oneTimeBuy).lineItems)
        #expect(
            ReportValidator(token: token, now: Self.now).problems(in: items).map(\.name) == [
                "LineItemCreationDateOutOfRangeError"
            ]
        )
    }
}

@Suite("App Store JWT")
struct AppStoreJWTTests {
    @Test func signsES256TokensThatOpenSSLVerifies() throws {
        let key = try ES256Key.generate()
        let credentials = AppStoreJWT.Credentials(
            issuerId: "57246542-96fe-1a63e053-0824d011072a",
            keyId: "2X9R4HXF34",
            key: key
        )
        let jwt = try AppStoreJWT.make(credentials: credentials, bundleId: "com.example", now: 1_623_085_200)
        let parts = jwt.split(separator: ".")
        #expect(parts.count == 3)
        let headerBytes = try #require(Base64URL.decode(parts[0].utf8))
        let header = try JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: String]
        #expect(header == ["alg": "ES256", "kid": "2X9R4HXF34", "typ": "JWT"])
        let claimBytes = try #require(Base64URL.decode(parts[1].utf8))
        let claims = try #require(try JSONSerialization.jsonObject(with: Data(claimBytes)) as? [String: Any])
        #expect(claims["iss"] as? String == "57246542-96fe-1a63e053-0824d011072a")
        #expect(claims["aud"] as? String == "appstoreconnect-v1")
        #expect(claims["bid"] as? String == "com.example")
        let iat = try #require(claims["iat"] as? Int)
        let exp = try #require(claims["exp"] as? Int)
        // Issued a minute early for clock skew; still within Apple's 60 minutes ("Generating JSON Web Tokens for API
        // requests").
        #expect(iat == 1_623_085_200 - 60)
        #expect(exp == 1_623_085_200 + 20 * 60)
        #expect(exp > iat && exp - iat <= 3600)
        let signature = try #require(Base64URL.decode(parts[2].utf8))
        #expect(signature.count == 64)
        // Verified with only the public half, as Apple would.
        let verifier = try ES256Key(pem: try key.publicKeyPEM())
        #expect(verifier.verify(signature, message: Array((parts[0] + "." + parts[1]).utf8)))
        #expect(!verifier.verify(signature, message: Array((parts[0] + "." + parts[1] + "x").utf8)))
        let otherKey = try ES256Key(pem: try ES256Key.generate().publicKeyPEM())
        #expect(!otherKey.verify(signature, message: Array((parts[0] + "." + parts[1]).utf8)))
    }

    @Test func refusesKeysThatAreNotP256() {
        #expect(throws: CryptoError.self) {
            try ES256Key(pem: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
        }
    }
}

/// Apple's limits on corrections, refunds and subscription references (the error objects of Apple's "Error messages and
/// codes"), one row per rule: what was reported before, what is sent now, and the errors Apple would answer with.
@Suite("Apple's correction and reference rules")
struct ReportCorrectionRuleTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var earlier: [LineItem]
        var sent: [LineItem]
        var expected: [String]
        var testDescription: String { name }
    }

    static let now = ReportModelTests.now
    static let day: Int64 = 86_400_000

    static func item(_ json: String) -> LineItem {
        // Apple's example bodies decode (ReportModelTests checks them).
        try! JSONDecoder().decode(ExternalPurchaseReport.self, from: Data(json.utf8)).lineItems![0]
    }

    static func buy(at date: Int64, restated: Bool = false, retracted: Bool = false) -> LineItem {
        guard case .oneTimeBuy(var buy) = item(ReportModelTests.oneTimeBuy) else { fatalError("example changed") }
        buy.creationDate = date
        if restated || retracted { buy.restatement = true }
        // A retracted buy stands for nothing: its net is recalculated to 0 (`PurchaseNet`).
        if retracted { (buy.erroneouslySubmitted, buy.netAmountTaxExclusive) = (true, 0) }
        return .oneTimeBuy(buy)
    }

    static func refund(at date: Int64) -> LineItem {
        guard case .refund(var refund) = item(ReportModelTests.refund) else { fatalError("example changed") }
        refund.creationDate = date
        return .refund(refund)
    }

    /// Apple's example refund (2000 of the 8000 buy, tax-exclusive) under another id, or retracted, with a net.
    static func refund(
        at date: Int64,
        id: String = "bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb",
        net: Int64,
        retracted: Bool = false
    )
        -> LineItem
    {
        guard case .refund(var refund) = item(ReportModelTests.refund) else { fatalError("example changed") }
        (refund.creationDate, refund.lineItemId, refund.netAmountTaxExclusive) = (date, LineItemID(id), net)
        if retracted { (refund.restatement, refund.erroneouslySubmitted) = (true, true) }
        return .refund(refund)
    }

    /// Apple's example buy restated with other amounts (tax-exclusive, tax a quarter of it), currency or country.
    static func restatedBuy(
        at date: Int64,
        exclusive: Int64 = 8000,
        net: Int64,
        currency: String = "EUR",
        country: String = "ESP"
    ) -> LineItem {
        guard case .oneTimeBuy(var buy) = buy(at: date, restated: true) else { fatalError("example changed") }
        (buy.amountTaxExclusive, buy.taxAmount, buy.amountTaxInclusive) = (exclusive, exclusive / 4, exclusive * 5 / 4)
        (buy.netAmountTaxExclusive, buy.taxCountry) = (net, TaxCountry(country))
        (buy.pricingCurrency, buy.reportingCurrency) = (CurrencyCode(currency), CurrencyCode(currency))
        return .oneTimeBuy(buy)
    }

    static var start: LineItem { item(ReportModelTests.subscriptionStart) }

    static func subscription(
        _ event: String,
        id: String = "dddddddd-dddd-dddd-dddd-dddddddddddd",
        reference: String? = "cccccccc-cccc-cccc-cccc-cccccccccccc",
        amount: Int64 = 10000,
        at date: Int64? = nil
    ) -> LineItem {
        guard case .subscriptionBuy(var item) = item(ReportModelTests.renewal) else { fatalError("example changed") }
        item.lineItemId = LineItemID(id)
        if let date { item.creationDate = date }
        item.subscriptionEvent = event
        item.referenceLineItemId = reference.map(LineItemID.init)
        item.amountTaxInclusive = amount
        item.taxAmount = amount / 5
        item.amountTaxExclusive = amount - amount / 5
        item.netAmountTaxExclusive = item.amountTaxExclusive
        return .subscriptionBuy(item)
    }

    static let cases: [Case] = [
        Case(
            name: "a restatement within a year, same creationDate",
            earlier: [buy(at: now - 300 * day)],
            sent: [buy(at: now - 300 * day, restated: true)],
            expected: []
        ),
        Case(
            name: "a restatement more than a year after creationDate",
            earlier: [buy(at: now - 400 * day)],
            sent: [buy(at: now - 400 * day, restated: true)],
            expected: ["RestatementNotAllowedCreationDateError"]
        ),
        Case(
            name: "a retraction more than a year after creationDate",
            earlier: [buy(at: now - 366 * day)],
            sent: [buy(at: now - 366 * day, retracted: true)],
            expected: ["RestatementNotAllowedCreationDateError"]
        ),
        Case(
            name: "a restatement that changes creationDate",
            earlier: [buy(at: now - 30 * day)],
            sent: [buy(at: now - 29 * day, restated: true)],
            expected: ["RestatementCreationDateMismatchError"]
        ),
        Case(
            name: "a refund 364 days after the buy",
            earlier: [buy(at: now - 400 * day)],
            sent: [refund(at: now - 36 * day)],
            expected: []
        ),
        Case(
            name: "a refund more than a year after the buy",
            earlier: [buy(at: now - 400 * day)],
            sent: [refund(at: now - 34 * day)],
            expected: ["RefundNotAllowedCreationDateError"]
        ),
        Case(
            name: "a refund dated before the buy it refunds",
            earlier: [buy(at: now - 40 * day)],
            sent: [refund(at: now - 41 * day)],
            expected: ["ReferencedCreationDateIncompatibleError"]
        ),
        Case(
            name: "a retraction of a refund Apple took dated before its buy",
            earlier: [buy(at: now - 40 * day), refund(at: now - 41 * day, net: 6000)],
            sent: [refund(at: now - 41 * day, net: 8000, retracted: true)],
            expected: []
        ),
        Case(
            name: "a renewal referencing the start",
            earlier: [start],
            sent: [subscription("RENEWAL")],
            expected: []
        ),
        Case(
            name: "a renewal dated before the start it references",
            earlier: [start],
            sent: [subscription("RENEWAL", at: start.common.creationDate - 1)],
            expected: ["ReferencedCreationDateIncompatibleError"]
        ),
        Case(
            name: "a renewal dated with the start it references",
            earlier: [start],
            sent: [subscription("RENEWAL", at: start.common.creationDate)],
            expected: []
        ),
        Case(
            name: "a renewal referencing a start held by another token",
            earlier: [],
            sent: [subscription("RENEWAL")],
            expected: []
        ),
        Case(
            name: "a renewal referencing a renewal",
            earlier: [start, subscription("RENEWAL", id: "r1")],
            sent: [subscription("RENEWAL", id: "r2", reference: "r1")],
            expected: ["ReferenceInvalidSubscriptionEventError"]
        ),
        Case(
            name: "a subscription change referencing a one-time buy",
            earlier: [buy(at: now - day)],
            sent: [subscription("SUBSCRIPTION_CHANGE", reference: "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa")],
            expected: ["ReferenceInvalidSubscriptionEventError"]
        ),
        Case(
            name: "a renewal referencing a refund",
            earlier: [buy(at: now - 2 * day), refund(at: now - day)],
            sent: [subscription("RENEWAL", reference: "bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb")],
            expected: ["ReferenceLineItemNotABuyError"]
        ),
        Case(
            name: "a zero-amount SUBSCRIPTION_PAYMENT",
            earlier: [start],
            sent: [subscription("SUBSCRIPTION_PAYMENT", amount: 0)],
            expected: ["InvalidTaxInclusiveAmountForSubscriptionPaymentError"]
        ),
        Case(
            name: "a paid SUBSCRIPTION_PAYMENT",
            earlier: [start],
            sent: [subscription("SUBSCRIPTION_PAYMENT", amount: 4990)],
            expected: []
        ),
        Case(
            name: "a zero-amount RENEWAL (a free period is still reported)",
            earlier: [start],
            sent: [subscription("RENEWAL", amount: 0)],
            expected: []
        ),
        Case(
            name: "a retracted refund's net is the buy less the refunds that still stand",
            earlier: [buy(at: now - 30 * day), refund(at: now - 20 * day, net: 6000)],
            sent: [refund(at: now - 20 * day, net: 8000, retracted: true)],
            expected: []
        ),
        Case(
            name: "a retracted refund with a net of 0",
            earlier: [buy(at: now - 30 * day), refund(at: now - 20 * day, net: 6000)],
            sent: [refund(at: now - 20 * day, net: 0, retracted: true)],
            expected: ["IncorrectNetAmountError"]
        ),
        Case(
            name: "a refund after a retracted one counts only what stands (not both versions of the retracted)",
            earlier: [
                buy(at: now - 30 * day), refund(at: now - 20 * day, net: 6000),
                refund(at: now - 20 * day, net: 8000, retracted: true),
            ],
            sent: [refund(at: now - 10 * day, id: "cccccccc-0000-0000-0000-000000000000", net: 6000)],
            expected: []
        ),
    ]

    /// Apple's references between withdrawn and standing items: a refund may not refer to a withdrawn buy, and a
    /// buy a standing refund refers to may not be withdrawn (the refund goes first).
    static let referenceCases: [Case] = [
        Case(
            name: "a refund of a withdrawn buy",
            earlier: [buy(at: now - 30 * day), buy(at: now - 30 * day, retracted: true)],
            // Its net is right (a withdrawn buy stands for nothing): only the reference is wrong.
            sent: [refund(at: now - 10 * day, net: 0)],
            expected: ["ValidLineItemReferencesErroneousLineItemError"]
        ),
        Case(
            name: "a buy withdrawn while its refund stands",
            earlier: [buy(at: now - 30 * day), refund(at: now - 20 * day, net: 6000)],
            sent: [buy(at: now - 30 * day, retracted: true)],
            expected: ["ErroneousLineItemReferencedByValidLineItemError"]
        ),
        Case(
            name: "a buy withdrawn after its refund was",
            earlier: [
                buy(at: now - 30 * day), refund(at: now - 20 * day, net: 6000),
                refund(at: now - 20 * day, net: 8000, retracted: true),
            ],
            sent: [buy(at: now - 30 * day, retracted: true)],
            expected: []
        ),
    ]

    /// A buy restated while a refund of it stands must still be what the refund refunds: the same currencies and
    /// country, and not less than the refund.
    static let restatedBuyCases: [Case] = [
        Case(
            name: "a buy restated above its standing refund",
            earlier: [buy(at: now - 30 * day), refund(at: now - 20 * day, net: 6000)],
            sent: [restatedBuy(at: now - 30 * day, exclusive: 9000, net: 7000)],
            expected: []
        ),
        Case(
            name: "a buy restated below its standing refund",
            earlier: [buy(at: now - 30 * day), refund(at: now - 20 * day, net: 6000)],
            sent: [restatedBuy(at: now - 30 * day, exclusive: 1000, net: 0)],
            expected: ["IncorrectAmountTaxInclusiveError"]
        ),
        Case(
            name: "a buy restated into another currency than its standing refund",
            earlier: [buy(at: now - 30 * day), refund(at: now - 20 * day, net: 6000)],
            sent: [restatedBuy(at: now - 30 * day, net: 6000, currency: "USD")],
            expected: ["PricingCurrencyMismatchError", "ReportingCurrencyMismatchError"]
        ),
        Case(
            name: "a buy restated into another tax country than its standing refund",
            earlier: [buy(at: now - 30 * day), refund(at: now - 20 * day, net: 6000)],
            sent: [restatedBuy(at: now - 30 * day, net: 6000, country: "FRA")],
            expected: ["TaxCountryMismatchError"]
        ),
        Case(
            name: "a buy restated into another currency once its refund was withdrawn",
            earlier: [
                buy(at: now - 30 * day), refund(at: now - 20 * day, net: 6000),
                refund(at: now - 20 * day, net: 8000, retracted: true),
            ],
            sent: [restatedBuy(at: now - 30 * day, net: 8000, currency: "USD")],
            expected: []
        ),
    ]

    @Test(arguments: restatedBuyCases)
    func aRestatedBuyStaysWhatItsStandingRefundsRefund(_ rule: Case) {
        let validator = ReportValidator(token: nil, earlierLineItems: rule.earlier, now: Self.now)
        #expect(validator.problems(in: rule.sent).map(\.name) == rule.expected, "\(rule.name)")
    }

    @Test(arguments: cases + referenceCases)
    func eachRuleIsNamedLikeApplesError(_ rule: Case) {
        let validator = ReportValidator(token: nil, earlierLineItems: rule.earlier, now: Self.now)
        #expect(validator.problems(in: rule.sent).map(\.name) == rule.expected)
    }
}
