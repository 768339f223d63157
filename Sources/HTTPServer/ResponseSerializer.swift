/// Writes a response's bytes: status line, `Date`, `Content-Length`, `Connection`, the handler's fields,
/// `X-Content-Type-Options: nosniff` unless the handler set that field itself, then the body.
enum ResponseSerializer {
    static func append(
        _ response: HTTPResponse,
        to output: inout [UInt8],
        date: [UInt8],
        keepAlive: Bool,
        omitBody: Bool,
        requestID: String = ""
    ) {
        let status = response.status
        output.append(contentsOf: statusLinePrefix)
        output.append(contentsOf: String(status.code).utf8)
        output.append(space)
        output.append(contentsOf: status.reasonPhrase.utf8)
        output.append(contentsOf: crlf)
        output.append(contentsOf: dateName)
        output.append(contentsOf: date)
        output.append(contentsOf: crlf)
        if !status.forbidsBody {
            output.append(contentsOf: contentLengthName)
            output.append(contentsOf: String(response.body.count).utf8)
            output.append(contentsOf: crlf)
        }
        output.append(contentsOf: keepAlive ? connectionKeepAlive : connectionClose)
        if !requestID.isEmpty {
            output.append(contentsOf: requestIDName)
            output.append(contentsOf: requestID.utf8)
            output.append(contentsOf: crlf)
        }
        for field in response.headers {
            output.append(contentsOf: field.name.utf8)
            output.append(contentsOf: colonSpace)
            appendFieldValue(field.value, to: &output)
            output.append(contentsOf: crlf)
        }
        // Every response: a browser must never guess a type for JSON, CSV or an error text (it could guess HTML).
        if !response.headers.contains(name: "X-Content-Type-Options") { output.append(contentsOf: noSniff) }
        output.append(contentsOf: crlf)
        if !omitBody && !status.forbidsBody {
            output.append(contentsOf: response.body)
        }
    }

    /// A field value as it may go on the wire: a CR, LF or NUL in it (a value taken from elsewhere, say a
    /// provider's address) becomes a space, as RFC 9110 §5.5 has a recipient do, so it can never end its field
    /// and start another.
    private static func appendFieldValue(_ value: String, to output: inout [UInt8]) {
        let start = output.count
        output.append(contentsOf: value.utf8)
        for index in start..<output.count where output[index] <= carriageReturn {
            let byte = output[index]
            if byte == carriageReturn || byte == lineFeed || byte == 0 { output[index] = space }
        }
    }

    /// The interim response a client waits for after `Expect: 100-continue`.
    static let continueResponse = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// Sent to a connection accepted above the connection cap, before closing it.
    static let overloadResponse = Array(
        ("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 20\r\nConnection: close\r\nRetry-After: 1\r\n"
            + "Content-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\n\r\n"
            + "Server at capacity.\n").utf8
    )

    private static let statusLinePrefix = Array("HTTP/1.1 ".utf8)
    private static let space = UInt8(ascii: " ")
    private static let carriageReturn = UInt8(ascii: "\r")
    private static let lineFeed = UInt8(ascii: "\n")
    private static let crlf = Array("\r\n".utf8)
    private static let colonSpace = Array(": ".utf8)
    private static let dateName = Array("Date: ".utf8)
    private static let contentLengthName = Array("Content-Length: ".utf8)
    private static let connectionKeepAlive = Array("Connection: keep-alive\r\n".utf8)
    private static let connectionClose = Array("Connection: close\r\n".utf8)
    private static let noSniff = Array("X-Content-Type-Options: nosniff\r\n".utf8)
    private static let requestIDName = Array("X-Request-Id: ".utf8)
}
