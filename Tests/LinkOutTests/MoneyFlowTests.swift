import Dispatch
import Domain
import Foundation
import Lifecycle
import Payments
import Storage
import TestSupport
import Testing

@testable import LinkOut
@testable import Storage

/// Purchases, a renewal and refunds in two currencies (EUR, and JPY whose minor unit is the yen) made through the
/// real path (landing, checkout, Stripe's webhooks, Apple line items, reports accepted by the fake Apple), then
/// the revenue API, the reconciliation export, the monthly close and the ledger's month totals checked against
/// totals worked out by hand below, before and after a retraction.
@Suite("Money flow")
struct MoneyFlowTests {
    static let adminToken = DashboardTests.adminToken

    static func harness() throws -> PaymentHarness {
        try PaymentHarness(provider: .stripe) { configuration in
            configuration.adminToken = Self.adminToken
            for index in configuration.catalog.indices where configuration.catalog[index].id == "pro.lifetime" {
                configuration.catalog[index].prices["JPY"] = Money(currency: "JPY", decimal: "4800")
            }
            configuration.commission.regimes = [
                CommissionRegime(
                    id: "test-15",
                    countries: ["DEU", "JPN"],
                    from: 0,
                    standardBasisPoints: 1500,
                    reducedBasisPoints: 1000,
                    windowDays: 7,
                    source: "test",
                    confidence: "test"
                )
            ]
        }
    }

    static func refund(id: String, charge: String, intent: String, amount: Int64, refunded: Int64, currency: String)
        -> String
    {
        """
        {"id":"\(id)","object":"event","api_version":"2026-09-30.endive","created":\(Clock.system.nowSeconds()),\
        "livemode":false,"type":"charge.refunded","data":{"object":{"id":"\(charge)","object":"charge",\
        "payment_intent":"\(intent)","amount":\(amount),"amount_refunded":\(refunded),"currency":"\(currency)",\
        "refunded":\(refunded == amount),"metadata":{}}}}
        """
    }

    /// Makes the month's traffic: returns when every event is acted on and every report accepted, with the
    /// token of the EUR one-time buy.
    @discardableResult
    static func makeTraffic(_ harness: PaymentHarness) throws -> String {
        // EUR one-time buy: €29.99 with €4.79 VAT (DE).
        let lifetime = try harness.openCheckout()
        #expect(try harness.choose(lifetime, product: "pro.lifetime", currency: "EUR").status == 303)
        #expect(
            try harness.deliver(
                StripeEvents.sessionCompleted(
                    id: "evt_a",
                    session: "cs_test_fake1",
                    checkout: lifetime,
                    product: "pro.lifetime",
                    total: 2999,
                    tax: 479,
                    country: "DE",
                    paymentIntent: "pi_a"
                )
            ).status == 200
        )
        // EUR subscription: €3.99 start, a €3.99 renewal, the renewal refunded in full.
        let monthly = try harness.openCheckout()
        #expect(try harness.choose(monthly, product: "pro.monthly", currency: "EUR").status == 303)
        #expect(
            try harness.deliver(
                StripeEvents.sessionCompleted(
                    id: "evt_b",
                    session: "cs_test_fake2",
                    checkout: monthly,
                    product: "pro.monthly",
                    mode: "subscription",
                    total: 399,
                    tax: 0,
                    country: "DE",
                    subscription: "sub_b"
                )
            ).status == 200
        )
        try harness.waitForEvents()
        let periodEnd = try #require(
            try harness.live.application.ledger.payments.purchase(id: "cs_test_fake2")?.periodEnd
        )
        #expect(
            try harness.deliver(
                StripeEvents.renewal(
                    id: "evt_b2",
                    invoice: "in_b2",
                    subscription: "sub_b",
                    total: 399,
                    start: periodEnd / 1000,
                    end: periodEnd / 1000 + 30 * 86_400
                )
            ).status == 200
        )
        let link = """
            {"id":"evt_b2link","object":"event","type":"invoice_payment.paid","created":\(Clock.system.nowSeconds()),\
            "livemode":false,"data":{"object":{"id":"inpay_b2","object":"invoice_payment","invoice":"in_b2",\
            "payment":{"type":"payment_intent","payment_intent":"pi_b2"},"status":"paid"}}}
            """
        #expect(try harness.deliver(link).status == 200)
        #expect(
            try harness.deliver(
                Self.refund(
                    id: "evt_b2r",
                    charge: "ch_b2",
                    intent: "pi_b2",
                    amount: 399,
                    refunded: 399,
                    currency: "eur"
                )
            ).status == 200
        )
        // JPY one-time buy: ¥4,800 with ¥436 tax (JP), ¥1,200 of it refunded.
        let yen = try harness.openCheckout()
        #expect(try harness.choose(yen, product: "pro.lifetime", currency: "JPY").status == 303)
        #expect(
            try harness.deliver(
                StripeEvents.sessionCompleted(
                    id: "evt_c",
                    session: "cs_test_fake3",
                    checkout: yen,
                    product: "pro.lifetime",
                    currency: "jpy",
                    total: 4800,
                    tax: 436,
                    country: "JP",
                    paymentIntent: "pi_c"
                )
            ).status == 200
        )
        try harness.waitForEvents()
        #expect(
            try harness.deliver(
                Self.refund(id: "evt_cr", charge: "ch_c", intent: "pi_c", amount: 4800, refunded: 1200, currency: "jpy")
            ).status == 200
        )
        try harness.waitForEvents()
        #expect(harness.reportedLineItems().count == 6)
        #expect(harness.apple.apple.received.allSatisfy { $0.problems.isEmpty })
        return lifetime.externalPurchaseId
    }

    typealias Figures = [String: (
        sales: Int64, gross: Int64, refunds: Int64, refunded: Int64, net: Int64, tax: Int64, commission: Int64
    )]

    /// Worked out by hand, milli-units of the reporting currency (tax-inclusive; commission 15 % of the
    /// tax-exclusive amount per line item, rounded half away from zero).
    /// EUR: buys 29,990 (tax 4,790, excl 25,200 → 3,780) + 3,990 (→ 598.5 → 599) + 3,990 (→ 599) = 37,970;
    ///      refund of the renewal 3,990 (→ −599); net 33,980; tax 4,790; commission 3,780 + 599 + 599 − 599 = 4,379.
    /// JPY: buy 4,800,000 (tax 436,000, excl 4,364,000 → 654,600); refund 1,200,000 with tax
    ///      1,200,000 × 436,000 / 4,800,000 = 109,000 (excl 1,091,000 → −163,650); net 3,600,000; tax 327,000;
    ///      commission 490,950.
    static let expected: Figures = [
        "EUR": (3, 37_970, 1, 3_990, 33_980, 4_790, 4_379),
        "JPY": (1, 4_800_000, 1, 1_200_000, 3_600_000, 327_000, 490_950),
    ]

    /// Once the EUR one-time buy is retracted at Apple (`erroneouslySubmitted`), it counts nothing: EUR keeps the
    /// subscription's two buys of 3,990 and the renewal's refund: gross 7,980, net 3,990, tax 0, commission
    /// 599 + 599 − 599 = 599. JPY is unchanged.
    static let afterRetraction: Figures = [
        "EUR": (2, 7_980, 1, 3_990, 3_990, 0, 599),
        "JPY": (1, 4_800_000, 1, 1_200_000, 3_600_000, 327_000, 490_950),
    ]

    /// The revenue, the reconciliation export and the monthly close of one month of traffic agree with the hand
    /// figures, and again after a line item is retracted: the close counts it once, outstanding until Apple
    /// accepts the retraction, and like the other two leaves its amounts out.
    @Test func revenueExportAndCloseAgreeWithTheHandComputedFigures() throws {
        let harness = try Self.harness()
        let started = Clock.system.nowMilliseconds()
        let lifetime = try Self.makeTraffic(harness)
        try Self.checkRevenue(harness, Self.expected)
        let rows = try Self.checkExport(harness, Self.expected)
        try Self.checkClose(harness, Self.expected, since: started)
        try Self.checkMoneyPage(harness)

        // The month's totals from the ledger, as the monthly close reads them.
        let ledger = harness.live.application.ledger
        let today = Clock.system.nowMilliseconds() / Milliseconds.day
        let month = UTCDate.days(year: UTCDate.civil(days: today).year, month: UTCDate.civil(days: today).month, day: 1)
        let monthTotals = try ledger.money.totals(fromDay: month - 31, untilDay: UTCDate.nextMonth(days: today))
        for (currency, figures) in Self.expected {
            let mine = monthTotals.filter { $0.reportingCurrency.rawValue == currency }
            #expect(mine.reduce(0) { $0 + $1.netAmount } == figures.net, "\(currency)")
            #expect(mine.reduce(0) { $0 + $1.commission } == figures.commission, "\(currency)")
        }
        #expect(try ledger.money.acceptance(from: 0, until: Int64.max) == (6, 6))

        // The operator retracts the EUR one-time buy Apple holds; until Apple accepts the retraction the close
        // has that one line item outstanding (not a seventh), then the three figures leave it out.
        let buy = try #require(rows.first { $0["amountTaxInclusive"] == "29990" }?["lineItemId"])
        // The retract action wakes reporting at once: the fake Apple holds the retraction's report until the close
        // has been read with it outstanding, then takes it.
        let release = DispatchSemaphore(value: 0)
        harness.apple.apple.respond { received in
            let items = received.bodyObject?["lineItems"] as? [[String: Any]] ?? []
            if items.contains(where: { $0["erroneouslySubmitted"] as? Bool == true }) {
                _ = release.wait(timeout: .now() + 10)
            }
            return nil
        }
        let retract = try harness.live.post(
            "/admin/tokens/\(lifetime)/line-items/\(buy)/retract",
            contentType: "application/json",
            body: "",
            headers: ["Authorization": "Bearer \(Self.adminToken)"]
        )
        #expect(retract.status == 200, "\(retract.text)")
        let waiting = try Self.closeReports(harness, since: started)
        #expect(waiting.reduce(0) { $0 + Self.count($1, "lineItems", "total") } == 6)
        #expect(waiting.reduce(0) { $0 + Self.count($1, "lineItems", "outstanding") } == 1)
        release.signal()
        #expect(
            eventually(within: 30) {
                let reports = (try? Self.closeReports(harness, since: started)) ?? []
                return !reports.isEmpty && reports.allSatisfy { Self.count($0, "lineItems", "outstanding") == 0 }
            }
        )
        let sent = harness.reportedLineItems()
        #expect(sent.count == 7 && sent.last?["erroneouslySubmitted"] as? Bool == true)
        #expect(harness.apple.apple.received.allSatisfy { $0.problems.isEmpty })
        try Self.checkRevenue(harness, Self.afterRetraction)
        #expect(try Self.checkExport(harness, Self.afterRetraction).filter { $0["retracted"] == "true" }.count == 1)
        try Self.checkClose(harness, Self.afterRetraction, since: started)
    }

    /// The revenue API (by month over yesterday and today: a run across midnight of a month's last day still
    /// sums right).
    static func checkRevenue(_ harness: PaymentHarness, _ expected: Figures) throws {
        let today = Clock.system.nowMilliseconds() / Milliseconds.day
        let answer = try harness.live.get(
            "/admin/revenue?from=\(UTCDate.text(days: today - 1))&to=\(UTCDate.text(days: today))&by=month",
            headers: ["Authorization": "Bearer \(Self.adminToken)"]
        )
        #expect(answer.status == 200)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(answer.text.utf8)) as? [String: Any])
        let totals = try #require(json["totals"] as? [[String: Any]])
        for (currency, figures) in expected {
            let rows = totals.filter { $0["reportingCurrency"] as? String == currency }
            func sum(_ key: String) -> Int64 { rows.reduce(0) { $0 + (($1[key] as? Int).map(Int64.init) ?? 0) } }
            #expect(sum("salesCount") == figures.sales && sum("grossSales") == figures.gross, "\(currency)")
            #expect(sum("refundsCount") == figures.refunds && sum("refunds") == figures.refunded, "\(currency)")
            #expect(sum("net") == figures.net && sum("tax") == figures.tax, "\(currency)")
            #expect(sum("commissionEstimate") == figures.commission, "\(currency)")
        }
        let rows = try #require(json["rows"] as? [[String: Any]])
        #expect(rows.allSatisfy { $0["provider"] as? String == "stripe" })
        #expect(
            rows.filter { $0["pricingCurrency"] as? String == "JPY" }.reduce(0) { $0 + ($1["netPricing"] as? Int ?? 0) }
                == 3_600_000
        )
    }

    /// The reconciliation export: one row per line item (six), every one accepted by Apple; the rows not
    /// retracted sum to the figures. Returns the rows by column name.
    @discardableResult
    static func checkExport(_ harness: PaymentHarness, _ expected: Figures) throws -> [[String: String]] {
        let today = Clock.system.nowMilliseconds() / Milliseconds.day
        let csv = try harness.live.get(
            "/admin/line-items.csv?from=\(UTCDate.text(days: today - 1))&to=\(UTCDate.text(days: today))",
            headers: ["Authorization": "Bearer \(Self.adminToken)"]
        )
        #expect(csv.status == 200)
        let lines = csv.text.split(separator: "\r\n").map {
            $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        }
        let header = try #require(lines.first)
        let rows = lines.dropFirst().map { Dictionary(zip(header, $0)) { a, _ in a } }
        #expect(rows.count == 6)
        #expect(rows.allSatisfy { $0["reportState"] == "accepted" && $0["acceptedAt"]?.isEmpty == false })
        let counted = rows.filter { $0["retracted"] == "false" }
        #expect(counted.allSatisfy { $0["regime"] == "test-15" && $0["commissionable"] == "true" })
        for (currency, figures) in expected {
            let mine = counted.filter { $0["reportingCurrency"] == currency }
            func sum(_ name: String, _ event: String? = nil) -> Int64 {
                mine.filter { event == nil || $0["eventType"] == event }.reduce(0) { $0 + (Int64($1[name] ?? "") ?? 0) }
            }
            #expect(sum("amountTaxInclusive", "BUY") == figures.gross, "\(currency)")
            #expect(sum("amountTaxInclusive", "REFUND") == figures.refunded, "\(currency)")
            #expect(sum("taxAmount", "BUY") - sum("taxAmount", "REFUND") == figures.tax, "\(currency)")
            #expect(sum("commissionEstimate") == figures.commission, "\(currency)")
        }
        return rows
    }

    /// `GET /admin/close` (the report `linkout close` prints) of each month the traffic fell in (one, unless the
    /// test ran across the end of a month), for the sandbox tokens the test's Stripe test mode reports.
    static func closeReports(_ harness: PaymentHarness, since started: Int64) throws -> [[String: Any]] {
        let now = Clock.system.nowMilliseconds()
        let months = Set([CloseMonth(containing: started), CloseMonth(containing: now)]).sorted { $0.start < $1.start }
        return try months.map { month in
            let answer = try harness.live.get(
                "/admin/close?month=\(month.description)&environment=sandbox",
                headers: ["Authorization": "Bearer \(Self.adminToken)"]
            )
            #expect(answer.status == 200, "\(answer.text)")
            return try #require(try JSONSerialization.jsonObject(with: Data(answer.text.utf8)) as? [String: Any])
        }
    }

    static func count(_ report: [String: Any], _ group: String, _ key: String) -> Int64 {
        ((report[group] as? [String: Any])?[key] as? Int).map(Int64.init) ?? 0
    }

    /// The close: three tokens and six line items, every one accepted; its totals and commission estimate are
    /// the figures (the net without tax, as the close shows it, is `net - tax`).
    static func checkClose(_ harness: PaymentHarness, _ expected: Figures, since started: Int64) throws {
        let reports = try closeReports(harness, since: started)
        for (group, total) in [("tokens", Int64(3)), ("lineItems", 6)] {
            #expect(reports.reduce(0) { $0 + count($1, group, "total") } == total, "\(group)")
            #expect(reports.reduce(0) { $0 + count($1, group, "accepted") } == total, "\(group)")
        }
        #expect(reports.allSatisfy { ($0["outstandingList"] as? [Any])?.isEmpty == true })
        let totals = reports.compactMap { $0["totals"] as? [String: Any] }
        let currencies = totals.flatMap { $0["currencies"] as? [[String: Any]] ?? [] }
        for (currency, figures) in expected {
            let mine = currencies.filter { $0["reportingCurrency"] as? String == currency }
            func sum(_ key: String) -> Int64 { mine.reduce(0) { $0 + (($1[key] as? Int).map(Int64.init) ?? 0) } }
            #expect(sum("sales") == figures.gross && sum("refunds") == figures.refunded, "\(currency)")
            #expect(sum("tax") == figures.tax && sum("netTaxExclusive") == figures.net - figures.tax, "\(currency)")
            let commission = totals.reduce(0) {
                $0 + ((($1["commissionEstimate"] as? [String: Any])?[currency] as? Int).map(Int64.init) ?? 0)
            }
            #expect(commission == figures.commission, "\(currency)")
        }
    }

    /// The dashboard's money page: the month's net in each currency, the commission labelled an estimate.
    static func checkMoneyPage(_ harness: PaymentHarness) throws {
        let session = try DashboardTests.signIn(harness.live)
        let page = try harness.live.get("/admin/money", headers: ["Cookie": session])
        #expect(page.status == 200)
        #expect(page.text.contains("Commission (estimate)") && page.text.contains("test-15 (test)"))
        #expect(
            page.text.contains(
                "<td>EUR</td><td>37.97 (3)</td><td>3.99 (1)</td><td>33.98</td><td>4.79</td><td>4.38</td>"
            )
        )
        #expect(
            page.text.contains("<td>JPY</td><td>4800 (1)</td><td>1200 (1)</td><td>3600</td><td>327</td><td>491</td>")
        )
        // The chart is of production sales (real money); these are sandbox, so it has axes and no bars.
        let chart = try harness.live.get("/admin/money/chart.svg?days=365", headers: ["Cookie": session])
        #expect(
            chart.status == 200 && chart.text.hasPrefix("<svg")
                && chart.text.contains("<title>Sales and refunds per day in EUR")
        )
        #expect(try harness.live.get("/admin/money/chart.svg?days=7", headers: ["Cookie": session]).status == 400)
        #expect(try harness.live.get("/admin/money/chart.svg").status == 401)
    }

    @Test func badRevenueParametersAreRefusedByName() throws {
        let harness = try Self.harness()
        let auth = ["Authorization": "Bearer \(Self.adminToken)"]
        for (query, code) in [
            ("from=2026-13-01", "invalid_from"), ("to=yesterday", "invalid_to"),
            ("from=2026-11-02&to=2026-11-01", "invalid_range"), ("by=week", "invalid_by"),
            ("format=xml", "invalid_format"),
        ] {
            let answer = try harness.live.get("/admin/revenue?\(query)", headers: auth)
            #expect(answer.status == 400 && answer.text.contains(code), "\(query)")
        }
        #expect(try harness.live.get("/admin/revenue").status == 401)
        let csv = try harness.live.get("/admin/revenue?format=csv", headers: auth)
        #expect(csv.status == 200 && csv.text.hasPrefix("period,bundle_id,"))
    }

    @Test func theChartDrawsProductionSalesAboveAndRefundsBelowTheAxis() {
        func day(_ day: Int64, _ environment: Environment, sales: Int64, refunds: Int64) -> MoneyDay {
            MoneyDay(
                day: day,
                bundleId: "com.example",
                environment: environment,
                provider: "stripe",
                productId: "pro",
                taxCountry: "DEU",
                pricingCurrency: "EUR",
                reportingCurrency: "EUR",
                sales: 1,
                salesAmount: sales,
                salesTax: 0,
                salesPricing: sales,
                refunds: 1,
                refundsAmount: refunds,
                refundsTax: 0,
                refundsPricing: refunds,
                commission: 0,
                commissionable: 0
            )
        }
        let days = [
            day(100, .production, sales: 40_000, refunds: 10_000), day(100, .sandbox, sales: 900_000, refunds: 0),
        ]
        #expect(RevenueChart.busiestCurrency(days) == "EUR")
        let chart = RevenueChart(days: days, currency: "EUR", lastDay: 100, dayCount: 30)
        #expect(chart.totalSales == 40_000 && chart.totalRefunds == 10_000 && chart.axisMaximum == 40)
        let svg = chart.svg(dark: false)
        // 260 px of plot: 173 above the axis (y 185), 87 below. €40 fills the top; €10 is a quarter of the
        // bottom (217 tenths). The last of 30 slots of 64.4 px starts at 64 + 644 × 29 / 30 = 686.5.
        #expect(svg.contains(##"<rect x="686.5" y="12" width="14.9" height="173" fill="#1f5fa8"/>"##))
        #expect(svg.contains(##"<rect x="686.5" y="185" width="14.9" height="21.7" fill="#a8530f"/>"##))
        // A day's sum may reach Int64's end (every item bounded, their number not): held there, drawn full.
        let huge = [day(100, .production, sales: .max, refunds: 0), day(100, .production, sales: .max, refunds: .max)]
        let full = RevenueChart(days: huge, currency: "EUR", lastDay: 100, dayCount: 30)
        #expect(full.totalSales == .max && full.totalRefunds == .max)
        #expect(full.svg(dark: true).contains(##"height="173" fill="#7fb2ee"/>"##))
        #expect(RevenueChart.share(of: .max, in: .max, pixels: 1730) == 1730)
        #expect(RevenueChart.share(of: -5, in: 100, pixels: 1730) == 0)
        #expect(MilliUnitsText.text(-1_234_567, currency: "EUR") == "−1234.57")
        #expect(MilliUnitsText.text(499, currency: "JPY") == "0" && MilliUnitsText.text(500, currency: "JPY") == "1")
    }
}
