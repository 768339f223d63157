/// An error a handler throws to answer with a status and a message that is safe to show the client.
public struct HTTPError: HTTPResponseError, Sendable, CustomStringConvertible {
    public var status: HTTPStatus
    public var publicMessage: String
    public var headers: HTTPHeaders

    public init(_ status: HTTPStatus, _ publicMessage: String? = nil, headers: HTTPHeaders = HTTPHeaders()) {
        self.status = status
        self.publicMessage = publicMessage ?? status.reasonPhrase
        self.headers = headers
    }

    public var description: String { "HTTPError(\(status.code)): \(publicMessage)" }

    /// The plain-text response for this error.
    public var response: HTTPResponse {
        var response = HTTPResponse.text(publicMessage + "\n", status: status)
        for field in headers { response.headers.add(name: field.name, value: field.value) }
        return response
    }

    /// The same plain-text response whatever the request.
    public func response(to request: HTTPRequest) -> HTTPResponse { response }
}
