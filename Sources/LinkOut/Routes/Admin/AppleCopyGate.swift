import HTTPServer
import Synchronization

/// `GET /admin/reports/{id}/apple` two at a time. A lookup waits on Apple on the threads the buyers' checkout posts
/// wait on their provider with (`Router.Execution.outbound`): an operator reloading it while Apple is away must not
/// hold those up.
final class AppleCopyGate: Sendable {
    private let running = Atomic<Int>(0)
    static let atOnce = 2

    /// `lookup`'s response, or `busy` while two others are under way.
    func run(_ request: HTTPRequest, _ lookup: () throws -> HTTPResponse) throws -> HTTPResponse {
        guard running.add(1, ordering: .acquiringAndReleasing).newValue <= Self.atOnce else {
            running.subtract(1, ordering: .acquiringAndReleasing)
            return Self.busy()
        }
        defer { running.subtract(1, ordering: .acquiringAndReleasing) }
        return try lookup()
    }

    /// Apple's copy not asked for now: other lookups are under way, or the server is stopping.
    static func busy() -> HTTPResponse {
        JSONResponse.error(
            .serviceUnavailable,
            "busy",
            "Other lookups of Apple's copy are under way, or the server is stopping; try again in a few seconds.",
            retryAfter: 5
        )
    }
}
