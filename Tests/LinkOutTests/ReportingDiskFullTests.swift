import Domain
import ExternalPurchase
import Foundation
import Testing

@testable import LinkOut
@testable import Storage

/// Reporting on a ledger that takes no writes: one line for the pass, not one per token on every pass (a full disk
/// logged thousands of lines a minute), and nothing lost once it takes writes again. SQLite's page limit stands in
/// for the full disk, so this runs on SQLite in both tiers.
@Suite struct ReportingDiskFullTests {
    @Test func aLedgerThatTakesNoWritesIsOneLineAPass() throws {
        let harness = try ReportingHarness { $0.storage.postgresURL = nil }
        let tokens = (0..<300).map { "full-\($0)" }
        for token in tokens { try harness.record(token) }
        try harness.ledger.database.limitPages(1)
        harness.service.tick()
        let lines = harness.logLines.all
        #expect(lines.filter { $0.contains("reports not queued: the ledger takes no writes") }.count == 1)
        #expect(!lines.contains { $0.contains(#""message":"report not queued""#) }, "\(lines.prefix(3))")

        try harness.ledger.database.limitPages(nil)
        try harness.tickUntilSettled()
        harness.service.tick()
        #expect(Set(harness.production.received.compactMap { $0.report?.externalPurchaseId.rawValue }) == Set(tokens))
    }
}
