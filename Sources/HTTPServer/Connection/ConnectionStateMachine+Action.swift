extension ConnectionStateMachine {
    /// What the event loop must do next.
    enum Action {
        /// A complete request: route it and give its response to `respond`. Method, target, version, headers and
        /// body are filled in; the peer address and id are the loop's to add.
        case dispatch(HTTPRequest)
        /// The request's route refused it when its head arrived (no route 404, not this method 405, a declared
        /// body over the route's limit 413), or its chunked body passed that limit. Give `response` to `respond` as
        /// a handler's; the connection closes after it, since the rest of the body is never read.
        case refuse(HTTPRequest, HTTPResponse)
        /// The request was refused (malformed, too large, too slow); its answer is queued and the connection
        /// closes after it.
        case rejected(HTTPStatus)
        /// Write `pendingOutput` and report what the socket took with `wrote(_:now:)`.
        case write
        /// Shut down our sending side; keep reading (input is discarded) until the peer closes or the linger ends.
        case shutdownWrite
        /// Every response is written and the connection is done: close it when the socket holds no unread byte,
        /// else call `linger(now:)` so the client still gets to read the last response.
        case closeUnlessUnread
        /// Close the socket now.
        case close
        /// This turn's budget is spent while buffered requests wait: continue on a later turn, after others.
        case yield
        /// Nothing to do until the socket or a handler reports something; see `wantsRead` and `wantsWrite`.
        case wait
    }
}
