/// How large a request body a route takes. The server checks it when a request's head arrives, before it buffers
/// any of the body: a declared Content-Length above it is answered at once, a chunked body the moment it passes it.
public struct BodyLimit: Sendable {
    /// The largest body in bytes; nil for the server's `maxBodyBytes`, which also caps any larger value.
    public var maxBytes: Int?
    /// The route's own answer to a body above the limit (a JSON API answers in JSON); nil for a plain-text 413.
    /// It gets the request without its body, runs on the event loop and must not block.
    public var tooLarge: (@Sendable (HTTPRequest) -> HTTPResponse)?
    /// The route's check of the head before any body is read (its credentials): an answer refuses the body
    /// unread and closes the connection. A caller without the credential made the server hold the whole body
    /// first, a 256 KiB body per connection for a 401. It gets the request without its body (its address set),
    /// runs on the event loop and must not block.
    public var admit: (@Sendable (HTTPRequest) -> HTTPResponse?)?

    public init(maxBytes: Int? = nil, tooLarge: (@Sendable (HTTPRequest) -> HTTPResponse)? = nil) {
        self.maxBytes = maxBytes
        self.tooLarge = tooLarge
    }

    /// The same limit, the head checked by `check` first (`admit`).
    public func admitting(_ check: @escaping @Sendable (HTTPRequest) -> HTTPResponse?) -> BodyLimit {
        var limit = self
        limit.admit = check
        return limit
    }

    /// Up to the server's `maxBodyBytes`.
    public static let serverLimit = BodyLimit()

    /// No body at all: any body is a 413 when the head arrives. (Not `none`, which would read as `nil` wherever a
    /// `BodyLimit?` is expected.)
    public static let noBody = BodyLimit(maxBytes: 0)

    /// Up to `bytes`, answered with `tooLarge` above it (a plain-text 413 when nil).
    public static func upTo(_ bytes: Int, tooLarge: (@Sendable (HTTPRequest) -> HTTPResponse)? = nil) -> BodyLimit {
        BodyLimit(maxBytes: bytes, tooLarge: tooLarge)
    }

    /// The answer to a body above the limit. A route that takes none says so: "too large" for a body of `{}`
    /// sent to an action that reads nothing sent its caller looking for a size.
    func refusal(_ request: HTTPRequest) -> HTTPResponse {
        tooLarge?(request) ?? HTTPError(.contentTooLarge, refusalMessage).response
    }

    /// What a body above the limit is told.
    var refusalMessage: String { maxBytes == 0 ? Self.noBodyMessage : Self.tooLargeMessage }

    static let tooLargeMessage = "The request body is too large."
    static let noBodyMessage = "This request takes no body: send it without one."
}
