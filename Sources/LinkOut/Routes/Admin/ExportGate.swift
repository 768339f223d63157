import HTTPServer
import Synchronization

/// One CSV export of the admin API at a time: each is built in memory on a worker thread, and many at once took
/// the memory and the workers every other route needs (twenty concurrent exports of a 66,000-token ledger held
/// about a gigabyte and kept the token API waiting seconds). Another export asked for meanwhile gets a 429 to
/// come back to.
final class ExportGate: Sendable {
    private let running = Atomic<Bool>(false)

    /// `export`'s response, or the 429 while another export is being made.
    func run(_ export: () throws -> HTTPResponse) throws -> HTTPResponse {
        guard running.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            return JSONResponse.tooManyRequests(
                "export_running",
                "Another export is being made; try again when it is done.",
                retryAfter: 5
            )
        }
        defer { running.store(false, ordering: .releasing) }
        return try export()
    }
}
