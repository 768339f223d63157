public import Domain
import Foundation
public import Outbound

/// What Retrieve External Purchase Report said of one `requestIdentifier`, read by one rule wherever linkout
/// asks: Apple holds a report under an identifier only if it accepted one ("a report that you successfully
/// submitted"); its `NotFoundError` comes as a `400`, or a `404` carrying Apple's error body; `401` is the key
/// refused. A bare `404` is no answer of Apple's (a proxy's, a misrouted URL's): read as Apple's verdict, it sent a
/// report Apple may hold to needs attention.
public enum RetrievedReport: Sendable, Equatable {
    /// Apple holds the report: it was accepted.
    case held
    /// Apple holds no report under the identifier (and took the JWT to say so).
    case notFound
    /// Apple refused the request itself (`401`, `403`): the key.
    case refused(status: Int)
    /// `429`: come back later.
    case rateLimited
    /// Another status, or no answer: nothing can be concluded.
    case unknown(String)

    public static func read(
        _ retrieved: Result<(status: Int, body: String), HTTPClientError>,
        requestIdentifier: RequestIdentifier
    ) -> RetrievedReport {
        switch retrieved {
        case .success(let answer) where answer.status == 200:
            holds(answer.body, requestIdentifier) ? .held : .unknown("Retrieve answered 200 without the report")
        case .success(let answer) where answer.status == 400 || (answer.status == 404 && isApplesError(answer.body)):
            .notFound
        case .success(let answer) where answer.status == 404:
            .unknown("Retrieve answered 404, and the answer is not Apple's (no error body)")
        case .success(let answer) where answer.status == 401 || answer.status == 403:
            .refused(status: answer.status)
        case .success(let answer) where answer.status == 429:
            .rateLimited
        case .success(let answer):
            .unknown("Retrieve answered \(answer.status)")
        case .failure(let error):
            .unknown("Retrieve failed: \(error)")
        }
    }

    /// A JSON object carrying Apple's error fields (`errorCode`, `errorMessage`, or `errors`).
    public static func isApplesError(_ body: String) -> Bool {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] else {
            return false
        }
        return ["errorCode", "errorMessage", "errors"].contains { object[$0] != nil }
    }

    /// Whether a `200` is Apple's `RetrieveReportSuccessResponse` for this identifier (`{"report": {…,
    /// "requestIdentifier": …}}`): a page that only echoes the path (a proxy's, a misrouted URL's) holds nothing,
    /// and taking it for Apple's copy would leave the token unreported for good.
    static func holds(_ body: String, _ requestIdentifier: RequestIdentifier) -> Bool {
        guard let answer = (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any],
            let report = answer["report"] as? [String: Any],
            let held = report["requestIdentifier"] as? String
        else { return false }
        return held.lowercased() == requestIdentifier.rawValue.lowercased()
    }
}
