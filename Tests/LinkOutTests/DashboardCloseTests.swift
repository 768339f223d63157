import Domain
import Foundation
import Lifecycle
import TestSupport
import Testing

@testable import LinkOut

/// The dashboard's monthly close panel, from the close pass's last look: the months, their state, what is
/// outstanding and the time left before each deadline, on a manual clock.
@Suite("Dashboard close panel")
struct DashboardCloseTests {
    @Test func thePanelShowsTheStateAndTheTimeLeftBeforeTheDeadline() throws {
        let november = try #require(CloseMonth(parsing: "2026-11"))
        // 2026-12-12 00:00 UTC: three days before November's deadline, inside its warning window.
        let clock = ManualClock(startingAt: november.deadline(day: 15) - Milliseconds.days(3))
        let live = try LiveApplication(clock: clock.clock) {
            $0.adminToken = DashboardTests.adminToken
            $0.reporting.noLineItemAfterSeconds = 604_800
        }
        // The server's own first pass (at start) is over before the token is recorded; the next waits for the
        // manual clock, so the pass below is the last word.
        #expect(eventually(within: 30) { live.application.close.snapshot != nil })
        try live.recordAppToken("close-panel", now: november.start + Milliseconds.days(2))
        live.application.close.pass()
        let cookie = try DashboardTests.signIn(live)
        let page = String(decoding: try live.get("/admin", headers: ["Cookie": cookie]).body, as: UTF8.self)
        #expect(page.contains("<h2 id=\"close-title\">Monthly close</h2>"))
        let row = try #require(page.components(separatedBy: "<th scope=\"row\">2026-11</th>").dropFirst().first)
        let cells = row.prefix { $0 != "\n" }
        #expect(cells.contains("<td class=\"warn\">closing</td><td>1</td>"))
        #expect(cells.contains("in 3 d 0 h"))
        #expect(page.contains("<th scope=\"row\">2026-12</th><td class=\"muted\">open</td>"))
        #expect(!page.contains("RAW"))
    }
}
