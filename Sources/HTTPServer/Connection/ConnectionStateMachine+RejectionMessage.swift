extension ConnectionStateMachine {
    /// The plain-text body of the answer to a request refused before a handler saw it (`.rejected`).
    static func rejectionMessage(_ status: HTTPStatus) -> String {
        switch status.code {
        case 408: "The request took too long to arrive."
        case 413: "The request body is too large."
        case 414: "The request line is too long."
        case 431: "The request headers are too large."
        case 505: "Only HTTP/1.0 and HTTP/1.1 are supported."
        default: "The request is malformed."
        }
    }
}
