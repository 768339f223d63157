extension ConnectionStateMachine {
    /// What a request refused before a handler saw it (`.rejected`) is answered: its status and plain-text body.
    /// The parser names HTTP's own status for an unsupported version (505) or transfer coding (501), but those are
    /// the client's input, and bad input is answered with a 4xx, never a 5xx (product rule): both go out as 400,
    /// saying what was not supported.
    static func rejection(_ status: HTTPStatus) -> (status: HTTPStatus, message: String) {
        switch status.code {
        case 408: (status, "The request took too long to arrive.")
        case 413: (status, "The request body is too large.")
        case 414: (status, "The request line is too long.")
        case 431: (status, "The request headers are too large.")
        case 417: (status, "Only the expectation 100-continue is supported.")
        case 501: (.badRequest, "Only the chunked transfer coding is supported.")
        case 503: (status, "The server is shutting down; send the request again.")
        case 505: (.badRequest, "Only HTTP/1.0 and HTTP/1.1 are supported.")
        default: (status, "The request is malformed.")
        }
    }
}
