import Foundation
import HTTPServer

/// `GET /openapi.json`: the API's OpenAPI 3.1 document, `Public/openapi.json`, read once at start-up and served
/// from memory on the event loop. A missing or unreadable document stops start-up, like a missing template: the
/// server never runs with an API description that says nothing.
struct OpenAPIRoute: Sendable {
    static let fileName = "openapi.json"

    let body: [UInt8]

    init(publicDir: String) throws(ConfigurationError) {
        let path = (publicDir as NSString).appendingPathComponent(Self.fileName)
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(field: "server.publicDir", problem: "\(Self.fileName) cannot be read at \(path)")
        }
        guard (try? JSONSerialization.jsonObject(with: data)) is [String: Any] else {
            throw ConfigurationError(field: "server.publicDir", problem: "\(Self.fileName) is not a JSON object")
        }
        body = Array(data)
    }

    func show(_ request: HTTPRequest) -> HTTPResponse {
        HTTPResponse(
            status: .ok,
            headers: ["Content-Type": "application/json", "Cache-Control": "public, max-age=3600"],
            body: body
        )
    }
}
