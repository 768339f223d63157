import Domain
import ExternalPurchase
import Foundation
import Synchronization

/// The fake Apple's rejections for the month simulation: about `percent` % of reports, the first time Apple sees their
/// exact bytes, get a `400` with a realistic `SendReportErrorResponse` of one of Apple's kinds (Apple: "Error messages
/// and codes"). The same bytes again are accepted, as once the cause is gone.
final class RejectingApple: Sendable {
    enum Kind: String, CaseIterable, Sendable {
        /// `IncorrectNetAmountError` or `LineItemCreationDateOutOfRangeError` naming one line item.
        case lineItem = "line item refused"
        /// `SimultaneousSubmissionError`: no field, no line item.
        case simultaneous = "simultaneous submission"
        /// `DuplicateTokenStatusNotAllowedError` on a `DUPLICATE_TOKEN` report.
        case duplicateRefused = "DUPLICATE_TOKEN refused"
        /// Apple holds the report already and answers "duplicate request" (its 200 was lost).
        case duplicateRequest = "duplicate request (Apple holds it)"
        /// A report-level error only a person can fix (`LineItemStatusRegressionError`, `UnknownEnumError`).
        case other = "report-level error"
    }

    private struct State {
        var random: SplitMix64
        var seen: Set<[UInt8]> = []
        var counts: [Kind: Int] = [:]
    }

    let percent: UInt64
    private let state: Mutex<State>

    init(percent: UInt64, seed: UInt64) {
        self.percent = percent
        state = Mutex(State(random: SplitMix64(seed: seed ^ 0xA5A5)))
    }

    var counts: [Kind: Int] { state.withLock { $0.counts } }

    /// The answer to one report: a rejection, or nil (200).
    func answer(_ received: FakeAppleServer.Received) -> FakeAppleServer.Behavior? {
        guard let report = received.report else { return nil }
        return state.withLock { state -> FakeAppleServer.Behavior? in
            guard state.seen.insert(received.body).inserted, state.random.next() % 100 < percent else { return nil }
            var kind = Kind.allCases[Int(state.random.next() % UInt64(Kind.allCases.count))]
            let items = report.lineItems ?? []
            if kind == .lineItem && items.isEmpty { kind = .simultaneous }
            if kind == .duplicateRefused && report.status != .duplicateToken { kind = .other }
            state.counts[kind, default: 0] += 1
            typealias AppleError = FakeAppleServer.AppleError
            switch kind {
            case .lineItem:
                let id = items[Int(state.random.next() % UInt64(items.count))].common.lineItemId
                let error =
                    state.random.next() % 2 == 0
                    ? AppleError.incorrectNetAmount(id.rawValue) : AppleError.outOfRange(id.rawValue)
                return FakeAppleServer.rejection([error])
            case .simultaneous:
                return FakeAppleServer.rejection([AppleError.simultaneous])
            case .duplicateRefused:
                return FakeAppleServer.rejection([AppleError.duplicateTokenNotAllowed])
            case .duplicateRequest:
                guard case .respond(let status, _, let body) = FakeAppleServer.rejection([AppleError.duplicateRequest])
                else { return nil }
                return .holdAndRespond(status: status, body: body)
            case .other:
                let error =
                    state.random.next() % 2 == 0
                    ? AppleError.statusRegression
                    : SendReportErrorResponse.Failure(
                        errorCode: 4_000_050,
                        errorMessage: "UnknownEnumError: taxCountry is not a known value",
                        fieldName: "taxCountry"
                    )
                return FakeAppleServer.rejection([error])
            }
        }
    }
}
