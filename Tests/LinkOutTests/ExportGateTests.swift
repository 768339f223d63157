import HTTPServer
import Testing

@testable import LinkOut

/// One admin export at a time: another asked for meanwhile is a 429 to come back to, and the gate opens again.
@Suite("ExportGate")
struct ExportGateTests {
    @Test func aSecondExportWhileOneRunsIsToldToComeBack() throws {
        let gate = ExportGate()
        var inner: HTTPResponse?
        let outer = try gate.run {
            inner = try gate.run { .text("second") }
            return .text("first")
        }
        #expect(outer.status == .ok)
        #expect(inner?.status.code == 429)
        #expect(inner?.headers["Retry-After"] == "5")
        let refusal = String(decoding: inner?.body ?? [], as: UTF8.self)
        #expect(refusal.contains("export_running"))
        #expect(try gate.run { .text("again") }.status == .ok)
        struct Failed: Error {}
        #expect(throws: Failed.self) { try gate.run { throw Failed() } }
        #expect(try gate.run { .text("after a failure") }.status == .ok)
    }
}
