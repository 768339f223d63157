/// An error that knows how to answer: a handler throws it where a request cannot go on, and the server sends the
/// response the error makes for that request (a page in the request's language, a plain message). The handler's
/// own code then reads as the way that succeeds, each refusal one `throw`.
public protocol HTTPResponseError: Error {
    /// The status of the response.
    var status: HTTPStatus { get }

    /// The response for `request`, the request the handler was answering.
    func response(to request: HTTPRequest) -> HTTPResponse
}
