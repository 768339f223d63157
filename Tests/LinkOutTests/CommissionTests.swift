import Domain
import Foundation
import Testing

@testable import LinkOut

/// Classifying line items under Apple's commission regimes (spec §7), on the boundaries: the 7-day window, a
/// regime's first day, a refund of a commissionable buy, the integer rounding; and `commission.regimes` in the
/// configuration.
@Suite("Commission")
struct CommissionTests {
    static let october1 = UTCDate.milliseconds(year: 2026, month: 10, day: 1)
    static let regimes = CommissionRegime.builtIn

    static func sale(at date: Int64, tap: Int64, country: String = "DEU", amount: Int64 = 10_000)
        -> CommissionClassification.Sale
    {
        .init(taxCountry: country, creationDate: date, amountTaxExclusive: amount, tokenCreationDate: tap)
    }

    @Test func sevenDaysFromTheTapExactlyIsStillCommissionable() {
        let tap = Self.october1 + 3_600_000
        let last = CommissionClassification.classify(
            Self.sale(at: tap + Milliseconds.days(7), tap: tap),
            regimes: Self.regimes
        )
        #expect(last.regimeId == "eu-2026-10" && last.commissionable && last.daysFromTap == 7)
        // 15 % in the window plus the 5 % every sale carries: 2,000 of 10,000.
        #expect(last.basisPoints == 2000 && last.commission == 2000)
        let after = CommissionClassification.classify(
            Self.sale(at: tap + Milliseconds.days(7) + 1, tap: tap),
            regimes: Self.regimes
        )
        #expect(after.regimeId == "eu-2026-10" && !after.commissionable && after.daysFromTap == 7)
        #expect(after.basisPoints == 500 && after.commission == 500)
    }

    @Test func aRegimeStartsAtMidnightUTCOfItsFirstDay() {
        let before = CommissionClassification.classify(
            Self.sale(at: Self.october1 - 1, tap: Self.october1 - 1000),
            regimes: Self.regimes
        )
        #expect(before.regimeId == "eu-2025-06" && before.basisPoints == 1800)
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
        // 2,501 × 20 % = 500.2 → 500, given back.
        #expect(reversed.commission == -500)
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

    @Test func subscriptionsAfterAYearTakeTheReducedRateWhenTheRegimeSaysSo() {
        var regime = CommissionRegime.builtIn[2]
        regime.reducedRate = .subscriptionAfterOneYear
        var sale = Self.sale(at: Self.october1, tap: Self.october1, country: "JPN")
        sale.subscriptionDaysOfPaidService = 364
        #expect(CommissionClassification.classify(sale, regimes: [regime]).basisPoints == 1500)
        sale.subscriptionDaysOfPaidService = 365
        #expect(CommissionClassification.classify(sale, regimes: [regime]).basisPoints == 1000)
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
