extension ConnectionStateMachine {
    /// Where the connection is in its request/response cycle, carrying what only that part of the cycle needs.
    /// Leaving a phase drops what it carried, so nothing meant for one phase (a half-read body, a refusal still to
    /// report, a shutdown still owed) can linger into another.
    enum Phase {
        /// Between requests, nothing of the next one parsed yet. `hasReceivedBytes` is false on a new connection
        /// until its first byte: one opened only to hold a slot is given back sooner than an idle keep-alive one.
        case idle(hasReceivedBytes: Bool)
        /// Part of a request head has arrived (at `since`); `scan` is what looking at it so far found.
        case readingHead(since: UInt64, scan: HeadScan)
        /// The head is parsed and its route takes the body, which is read into the payload as it arrives.
        case readingBody(IncomingBody)
        /// A request was dispatched; nothing more is parsed until its response is given (keeps order).
        case waitingForHandler(keepAlive: Bool, omitBody: Bool)
        /// The queued output is the last (`Connection: close`, a refused request, or the server stopping): nothing
        /// more is parsed, and once it is written the connection closes. `unreportedRejection` is a refusal queued
        /// but not yet told to the loop (which reports it to the observer).
        case closingAfterWrite(unreportedRejection: HTTPStatus?)
        /// The last response is written and our side is to be shut down (`shutdownPending` until the loop is told
        /// to); unread input is drained until `until` so the kernel does not answer it with a reset that would
        /// destroy the response before the client reads it.
        case lingering(until: UInt64, shutdownPending: Bool)
        /// Finished; the socket is to be closed.
        case closed
        /// Only while `parse` has the body being read out of `.readingBody`: were the phase still holding it, the
        /// body's buffer would be shared and every append would copy it whole. Never seen outside that call.
        case modifying
    }

    /// A request whose body is being read: when its head arrived, the head as a request without body, what its
    /// route takes, the body so far, and whether the client waits for a `100 Continue` before sending it.
    struct IncomingBody {
        var since: UInt64
        var request: HTTPRequest
        var reader: BodyReader
        var limit: BodyLimit
        var expectsContinue: Bool
        var continueSent = false
    }
}
