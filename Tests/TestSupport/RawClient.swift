import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A blocking HTTP/1.1 test client on a real socket, so tests see exactly the bytes the server sends.
public final class RawClient {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        /// Part of a response had arrived when the connection ended: a response cut in half.
        public var partial = false
    }

    /// One response as read off the wire.
    public struct Response {
        public var status: Int
        public var headers: [(name: String, value: String)]
        public var body: [UInt8]
        public var raw: String

        public func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    public let fd: Int32
    private var buffer: [UInt8] = []

    /// Connects to `host:port`; reads give up after `timeout` seconds so a broken server fails the test, not hangs it.
    public init(host: String = "127.0.0.1", port: Int, timeout: Int = 5) throws {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let info = list?.pointee else {
            throw Failure(description: "cannot resolve \(host)")
        }
        defer { freeaddrinfo(list) }
        fd = socket(info.ai_family, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        // No close here on failure: every stored property is set, so `deinit` runs for the failed object and
        // closes the descriptor. Closing it here too would close whatever socket another thread got that number for.
        guard connect(fd, info.ai_addr, info.ai_addrlen) == 0 else {
            throw Failure(description: "connect: errno \(errno)")
        }
        setTimeout(seconds: timeout)
    }

    deinit { Glibc.close(fd) }

    /// How long one read or write may block; `readToEnd` and `isClosedByServer` also give up after ten of these.
    public func setTimeout(seconds: Int) {
        timeout = seconds
        var value = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    private var timeout = 5

    /// Reads until the server closes, or throws once `deadline` passes (a server that never stops talking).
    private func fillUntilClosed() throws {
        let deadline = Date() + Double(timeout * 10)
        while try fill() {
            guard Date() < deadline else { throw Failure(description: "the server never closed the connection") }
        }
    }

    public func send(_ text: String) {
        send(Array(text.utf8))
    }

    public func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { raw in
                Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent <= 0 { return }
            offset += sent
        }
    }

    /// Half-closes: no more bytes from us, but the response can still arrive.
    public func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    /// Aborts the connection with a reset (SO_LINGER 0), as a vanishing phone would.
    public func reset() {
        var option = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Reads more bytes; false at end of stream, throws on timeout or error.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count == 0 { return false }
        guard count > 0 else { throw Failure(description: "recv: errno \(errno)", partial: !buffer.isEmpty) }
        buffer.append(contentsOf: chunk[0..<count])
        return true
    }

    /// Reads one response. `headRequest` means no body follows whatever Content-Length says.
    public func readResponse(headRequest: Bool = false) throws -> Response {
        while true {
            if let end = findHeadEnd() {
                let head = String(decoding: buffer[0..<end], as: UTF8.self)
                var lines = head.components(separatedBy: "\r\n")
                let statusLine = lines.removeFirst()
                let parts = statusLine.split(separator: " ")
                guard parts.count >= 2, let status = Int(parts[1]) else {
                    throw Failure(description: "bad status line: \(statusLine)")
                }
                let headers: [(name: String, value: String)] = lines.compactMap { line in
                    guard let colon = line.firstIndex(of: ":") else { return nil }
                    return (
                        String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                    )
                }
                let length =
                    headRequest || status < 200 || status == 204 || status == 304
                    ? 0
                    : Int(headers.first { $0.name.lowercased() == "content-length" }?.value ?? "0") ?? 0
                while buffer.count < end + 4 + length {
                    guard try fill() else {
                        throw Failure(
                            description: "connection closed mid-body (\(buffer.count - end - 4) of \(length))"
                        )
                    }
                }
                let body = Array(buffer[(end + 4)..<(end + 4 + length)])
                let raw = String(decoding: buffer[0..<(end + 4 + length)], as: UTF8.self)
                buffer.removeFirst(end + 4 + length)
                return Response(status: status, headers: headers, body: body, raw: raw)
            }
            guard try fill() else {
                throw Failure(
                    description: buffer.isEmpty ? "connection closed" : "connection closed mid-head",
                    partial: !buffer.isEmpty
                )
            }
        }
    }

    public func roundTrip(_ request: String) throws -> Response {
        send(request)
        return try readResponse(headRequest: request.hasPrefix("HEAD "))
    }

    /// Everything until the server closes; the bytes already buffered come first.
    public func readToEnd() throws -> String {
        try fillUntilClosed()
        defer { buffer.removeAll() }
        return String(decoding: buffer, as: UTF8.self)
    }

    /// True when the server has closed the connection (EOF or reset) within the read timeout.
    public func isClosedByServer() -> Bool {
        do {
            try fillUntilClosed()
            return true
        } catch {
            return errno == ECONNRESET
        }
    }

    private func findHeadEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4)
        where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
            return index
        }
        return nil
    }
}
