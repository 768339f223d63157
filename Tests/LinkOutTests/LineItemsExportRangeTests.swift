import TestSupport
import Testing

@testable import LinkOut

/// `GET /admin/line-items.csv` builds its body in memory, so one request covers at most 92 days; the revenue
/// read, which reads the daily roll-up, still takes ten years.
@Suite("Line items export range")
struct LineItemsExportRangeTests {
    @Test func aLongerSpanThanAQuarterIsRefusedNamingTheLimit() throws {
        let harness = try MoneyFlowTests.harness()
        let auth = ["Authorization": "Bearer \(MoneyFlowTests.adminToken)"]
        let quarter = try harness.live.get("/admin/line-items.csv?from=2026-01-01&to=2026-04-02", headers: auth)
        #expect(quarter.status == 200 && quarter.text.hasPrefix("externalPurchaseId,"))
        let longer = try harness.live.get("/admin/line-items.csv?from=2026-01-01&to=2026-04-03", headers: auth)
        #expect(longer.status == 400 && longer.text.contains("invalid_range") && longer.text.contains("92 days"))
        let revenue = try harness.live.get("/admin/revenue?from=2026-01-01&to=2026-04-03", headers: auth)
        #expect(revenue.status == 200)
    }
}
