/// Delivers the response of a request whose handler answers later (deferred routes and the worker pool).
/// Call `respond` exactly once, from any thread; the connection's event loop writes the response in order.
public struct Responder: Sendable {
    let mailbox: LoopMailbox
    let fd: Int32
    let id: UInt64
    let startedAt: UInt64
    let request: HTTPRequest

    public func respond(_ response: HTTPResponse) {
        mailbox.post(.completed(fd: fd, id: id, response: response, startedAt: startedAt, request: request))
    }
}
