import Domain
import Foundation
import Storage
import Testing

@testable import LinkOut

/// Classifying line items under Apple's commission regimes (README, "Revenue and Apple's commission"), on the
/// boundaries: the 7-day window, a regime's first day, a refund of a commissionable buy, the integer rounding; and
/// `commission.regimes` in the configuration.
@Suite("Commission")
struct CommissionTests {
    static let october1 = UTCDate.milliseconds(year: 2026, month: 10, day: 1)
    static let regimes = CommissionRegime.builtIn

    static func sale(at date: Int64, tap: Int64, country: String = "DEU", amount: Int64 = 10_000)
        -> CommissionClassification.Sale
    {
        .init(taxCountry: TaxCountry(country), creationDate: date, amountTaxExclusive: amount, tokenCreationDate: tap)
    }

    @Test func sevenDaysFromTheTapExactlyIsStillCommissionable() {
        let tap = Self.october1 + 3_600_000
        let last = CommissionClassification.classify(
            Self.sale(at: tap + Milliseconds.days(7), tap: tap),
            regimes: Self.regimes
        )
        #expect(last.regimeId == "eu-2026-10" && last.commissionable && last.daysFromTap == 7)
        // 15 % in the window; no Core Technology Commission on an App Store app's link-out since 2026-10-01.
        #expect(last.basisPoints == 1500 && last.commission == 1500)
        let after = CommissionClassification.classify(
            Self.sale(at: tap + Milliseconds.days(7) + 1, tap: tap),
            regimes: Self.regimes
        )
        #expect(after.regimeId == "eu-2026-10" && !after.commissionable && after.daysFromTap == 7)
        #expect(after.basisPoints == 0 && after.commission == 0)
    }

    /// A token's creation date comes from Apple's notifications as it is: the farthest dates classify, not trap.
    @Test func aTokenDatedAtInt64sEndsClassifiesWithoutTrapping() {
        let early = CommissionClassification.classify(Self.sale(at: Self.october1, tap: .min), regimes: Self.regimes)
        #expect(early.regimeId == "eu-2026-10" && !early.commissionable)
        #expect(early.daysFromTap == Int64.max / Milliseconds.day)
        let late = CommissionClassification.classify(Self.sale(at: .min, tap: .max), regimes: Self.regimes)
        #expect(late.daysFromTap == 0)
    }

    @Test func aRegimeStartsAtMidnightUTCOfItsFirstDay() {
        let before = CommissionClassification.classify(
            Self.sale(at: Self.october1 - 1, tap: Self.october1 - 1000),
            regimes: Self.regimes
        )
        #expect(before.regimeId == "eu-2025-06" && before.basisPoints == 1800)
        #expect(CommissionRegime.builtIn.first { $0.id == "eu-2025-06" }?.windowDays == nil)
        let first = CommissionClassification.classify(
            Self.sale(at: Self.october1, tap: Self.october1 - 1000),
            regimes: Self.regimes
        )
        #expect(first.regimeId == "eu-2026-10")
        let none = CommissionClassification.classify(Self.sale(at: Self.october1, tap: 0), regimes: [])
        #expect(none == CommissionClassification(tapAt: 0, daysFromTap: none.daysFromTap))
        let elsewhere = CommissionClassification.classify(
            Self.sale(at: Self.october1, tap: Self.october1, country: "USA"),
            regimes: Self.regimes
        )
        #expect(elsewhere.regimeId == nil && elsewhere.commission == 0)
    }

    @Test func aRefundGivesBackTheBuysCommissionAtTheBuysRate() {
        let tap = Self.october1
        let buy = CommissionClassification.classify(Self.sale(at: tap + 1000, tap: tap), regimes: Self.regimes)
        // Refunded 40 days later (outside the window): still the buy's rate, the refunded part only.
        var refund = Self.sale(at: tap + Milliseconds.days(40), tap: tap, amount: 2_501)
        refund.isRefund = true
        refund.refundedBuy = buy
        let reversed = CommissionClassification.classify(refund, regimes: Self.regimes)
        #expect(reversed.regimeId == "eu-2026-10" && reversed.commissionable && reversed.daysFromTap == 40)
        // 2,501 × 15 % = 375.15 → 375, given back.
        #expect(reversed.commission == -375)
        refund.retracted = true
        #expect(CommissionClassification.classify(refund, regimes: Self.regimes).commission == 0)
    }

    @Test func theTapIsTheLandingWhenThatCameLaterAndRoundingIsHalfAwayFromZero() {
        var sale = Self.sale(at: Self.october1 + Milliseconds.days(9), tap: Self.october1)
        sale.landedAt = Self.october1 + Milliseconds.days(3)
        let classified = CommissionClassification.classify(sale, regimes: Self.regimes)
        #expect(classified.tapAt == sale.landedAt && classified.daysFromTap == 6 && classified.commissionable)
        #expect(CommissionClassification.apply(5000, to: 3) == 2)
        #expect(CommissionClassification.apply(5000, to: -3) == -2)
        #expect(CommissionClassification.apply(1500, to: 3) == 0)
        #expect(CommissionClassification.apply(1500, to: 29_990) == 4_499)
    }

    /// Apple: the reduced rate is "for App Store Small Business Program participants or subscriptions after
    /// their first year", in every built-in; a program participant says `reducedRate: always`.
    @Test(arguments: ["eu-2025-06", "eu-2026-10", "jp", "br"])
    func subscriptionsAfterTheirFirstYearTakeTheReducedRate(_ id: String) throws {
        let regime = try #require(CommissionRegime.builtIn.first { $0.id == id })
        #expect(regime.reducedRate == .subscriptionAfterOneYear)
        let country = regime.countries.sorted().first ?? ""
        var sale = Self.sale(at: regime.from + 1000, tap: regime.from, country: country)
        sale.subscriptionDaysOfPaidService = 364
        #expect(
            CommissionClassification.classify(sale, regimes: [regime]).basisPoints
                == regime.standardBasisPoints + regime.everySaleBasisPoints
        )
        sale.subscriptionDaysOfPaidService = 365
        #expect(
            CommissionClassification.classify(sale, regimes: [regime]).basisPoints
                == regime.reducedBasisPoints + regime.everySaleBasisPoints
        )
    }

    /// A renewal a month after the tap counts as its subscription's start did: commissionable when the start
    /// was (it came within 7 days of the tap), not when it was not; an operator can turn that off.
    @Test(arguments: ["eu-2026-10", "jp", "br"])
    func renewalsInheritTheirStartsWindow(_ id: String) throws {
        var regime = try #require(CommissionRegime.builtIn.first { $0.id == id })
        let country = regime.countries.sorted().first ?? ""
        let tap = regime.from + Milliseconds.days(1)
        let start = CommissionClassification.classify(
            Self.sale(at: tap + Milliseconds.days(2), tap: tap, country: country),
            regimes: [regime]
        )
        #expect(start.commissionable)
        var renewal = Self.sale(at: tap + Milliseconds.days(32), tap: tap, country: country)
        renewal.subscriptionDaysOfPaidService = 60
        renewal.subscriptionStart = start
        let inherited = CommissionClassification.classify(renewal, regimes: [regime])
        #expect(inherited.commissionable && inherited.basisPoints == regime.standardBasisPoints)
        let late = CommissionClassification.classify(
            Self.sale(at: tap + Milliseconds.days(9), tap: tap, country: country),
            regimes: [regime]
        )
        renewal.subscriptionStart = late
        #expect(!CommissionClassification.classify(renewal, regimes: [regime]).commissionable)
        regime.renewalsInheritWindow = false
        renewal.subscriptionStart = start
        #expect(!CommissionClassification.classify(renewal, regimes: [regime]).commissionable)
    }

    /// Every built-in names its source and how sure it is; the EU's terms since 2026-10-01 add no Core
    /// Technology Commission to an App Store app's link-out (it is for apps distributed outside the App Store),
    /// the June 2025 terms do (the External Purchase Link addendum's), and Brazil's start is marked unconfirmed.
    @Test func builtInsCarryTheirSourcesAndConfidence() throws {
        for regime in CommissionRegime.builtIn {
            #expect(!regime.source.isEmpty && ["confirmed", "secondary", "UNCONFIRMED"].contains(regime.confidence))
        }
        let byId = Dictionary(uniqueKeysWithValues: CommissionRegime.builtIn.map { ($0.id, $0) })
        #expect(byId["eu-2026-10"]?.everySaleBasisPoints == 0)
        #expect(byId["eu-2025-06"]?.everySaleBasisPoints == 500)
        #expect(byId["eu-2025-06"]?.source.contains("Alternative Terms") == true)
        #expect(byId["br"]?.confidence == "UNCONFIRMED")
        #expect(byId["eu-2026-10"]?.confidence == "UNCONFIRMED")
        #expect(byId["br"]?.from == UTCDate.milliseconds(year: 2026, month: 6, day: 18))
        // An Alternative Terms developer turns the Core Technology Commission off.
        let alternative = try Configuration.parse(
            Data(#"{"commission": {"regimes": [{"id": "eu-2025-06", "everySaleBasisPoints": 0}]}}"#.utf8)
        )
        #expect(alternative.commission.regimes.first?.everySaleBasisPoints == 0)
    }

    /// Beside every estimate, what it rests on: the revenue report and the close name each regime in force
    /// with its source and confidence (the dashboard shows the same).
    @Test func everyEstimateNamesItsRegimesSourcesAndConfidence() throws {
        let japan = CommissionRegime.builtIn.filter { $0.id == "jp" }
        let revenue = RevenueReport(days: [], firstDay: 20_400, lastDay: 20_400, by: .day, regimes: japan)
        #expect(revenue.regimeSources == [CommissionBasis(id: "jp", confidence: "secondary", source: japan[0].source)])
        let close = MoneyTotals.sum([], regimes: japan)
        #expect(close.commissionEstimate == [:])
        #expect(close.source.contains("jp (secondary: Apple, \"Payment options on the App Store in Japan\""))
        #expect(MoneyTotals.sum([], regimes: []).commissionEstimate == nil)
    }

    /// Every entry point opens the ledger with the configured regimes in force (`linkout notifications
    /// recover` used to write with none).
    @Test func aLedgerOpenedFromTheConfigurationClassifiesUnderItsRegimes() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-regimes-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        var configuration = try Configuration.parse(Data(#"{"commission": {"regimes": ["jp"]}}"#.utf8))
        configuration.storage.dataDir = folder.path
        let ledger = try configuration.openLedger(role: .reader)
        defer { ledger.close() }
        #expect(ledger.money.regimes.map(\.id) == ["jp"])
    }

    @Test func regimesAreOffUntilPickedAndReadFromTheConfiguration() throws {
        #expect(try Configuration.parse(Data("{}".utf8)).commission.regimes.isEmpty)
        let configuration = try Configuration.parse(
            Data(
                """
                {"commission": {"regimes": ["eu-2026-10", {"id": "jp", "reducedRate": "always"},
                  {"id": "kr", "region": ["KR"], "from": "2026-01-01", "until": "2027-01-01",
                   "standardBasisPoints": 2600, "windowDays": 7, "source": "operator", "confidence": "confirmed"}]}}
                """.utf8
            )
        )
        let regimes = configuration.commission.regimes
        #expect(regimes.map(\.id) == ["eu-2026-10", "jp", "kr"])
        #expect(regimes[1].reducedRate == .always && regimes[1].standardBasisPoints == 1500)
        #expect(regimes[2].countries == ["KOR"] && regimes[2].reducedBasisPoints == 2600)
        #expect(regimes[2].until == UTCDate.milliseconds(year: 2027, month: 1, day: 1))
    }

    @Test(arguments: [
        (#"{"commission": {"regimes": ["eu-2024"]}}"#, "commission.regimes[0]"),
        (#"{"commission": {"regimes": ["jp", "jp"]}}"#, "commission.regimes[1]"),
        (#"{"commission": {"regimes": [{"id": "x", "region": ["EU"]}]}}"#, "commission.regimes[0].from"),
        (#"{"commission": {"regimes": [{"id": "jp", "region": ["Japan"]}]}}"#, "commission.regimes[0].region[0]"),
        (#"{"commission": {"regimes": [{"id": "jp", "until": "2025-01-01"}]}}"#, "commission.regimes[0].until"),
        (#"{"commission": {"regimes": [{"id": "jp", "from": "2026-02-30"}]}}"#, "commission.regimes[0].from"),
        (#"{"commission": {"regimes": [{"id": "jp", "windowDays": 0}]}}"#, "commission.regimes[0].windowDays"),
        (#"{"commission": {"regimes": [{"id": "jp", "reducedRate": "often"}]}}"#, "commission.regimes[0].reducedRate"),
        (
            #"{"commission": {"regimes": [{"id": "jp", "standardBasisPoints": 10001}]}}"#,
            "commission.regimes[0].standardBasisPoints"
        ),
        (#"{"commission": {"regime": []}}"#, "commission.regime"),
    ])
    func mistakesNameTheirField(json: String, field: String) {
        do {
            _ = try Configuration.parse(Data(json.utf8))
            Issue.record("accepted \(json)")
        } catch {
            #expect(error.field == field)
        }
    }

    @Test func datesRoundTripThroughTheCalendar() {
        for days in [Int64(-1), 0, 20_423, 20_454, 11_016, 2_932_896] {
            #expect(UTCDate.parseDay(UTCDate.text(days: days)) == days)
        }
        #expect(UTCDate.parseMonth("2026-11") == UTCDate.days(year: 2026, month: 11, day: 1))
        #expect(
            UTCDate.nextMonth(days: UTCDate.days(year: 2026, month: 12, day: 31))
                == UTCDate.days(year: 2027, month: 1, day: 1)
        )
        #expect(UTCDate.parseDay("2028-02-29") != nil && UTCDate.parseDay("2027-02-29") == nil)
    }
}
