import CCurl
import Synchronization

/// One libcurl easy handle: the only place that calls libcurl. `curl_easy_reset` between transfers clears the
/// options but keeps the connection cache, so a reused handle keeps its TLS session to the host.
final class EasyHandle: Sendable {
    /// The CURL pointer; touched only by the thread that took this handle from the pool (one at a time).
    private let handle: Mutex<CurlPointer>

    init?() {
        guard let raw = curl_easy_init() else { return nil }
        handle = Mutex(CurlPointer(raw))
    }

    deinit {
        handle.withLock { curl_easy_cleanup($0.pointer) }
    }

    func perform(_ request: HTTPClientRequest, configuration: HTTPClient.Configuration) throws(HTTPClientError)
        -> HTTPClientResponse
    {
        try handle.withLock { box throws(HTTPClientError) in
            try Self.transfer(box.pointer, request, configuration)
        }
    }

    private static func transfer(
        _ curl: UnsafeMutableRawPointer,
        _ request: HTTPClientRequest,
        _ configuration: HTTPClient.Configuration
    ) throws(HTTPClientError) -> HTTPClientResponse {
        curl_easy_reset(curl)
        let accumulator = Accumulator(limit: configuration.maxResponseBytes, statusOnly: configuration.readsStatusOnly)
        let context = Unmanaged.passRetained(accumulator)
        defer { context.release() }
        var headerList: UnsafeMutablePointer<curl_slist>?
        for header in request.headers { headerList = curl_slist_append(headerList, "\(header.name): \(header.value)") }
        // An empty Expect stops curl from waiting for 100-continue on bodies over 1 KiB.
        headerList = curl_slist_append(headerList, "Expect:")
        defer { curl_slist_free_all(headerList) }
        var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)

        let code: CURLcode = errorBuffer.withUnsafeMutableBufferPointer { errors in
            _ = ccurl_setopt_string(curl, CURLOPT_URL, request.url)
            _ = ccurl_setopt_string(curl, CURLOPT_CUSTOMREQUEST, request.method)
            _ = ccurl_setopt_long(curl, CURLOPT_NOSIGNAL, 1)
            _ = ccurl_setopt_long(curl, CURLOPT_CONNECTTIMEOUT_MS, configuration.connectTimeout.milliseconds)
            _ = ccurl_setopt_long(curl, CURLOPT_TIMEOUT_MS, configuration.totalTimeout.milliseconds)
            _ = ccurl_setopt_long(curl, CURLOPT_FOLLOWLOCATION, 0)
            _ = ccurl_setopt_string(curl, CURLOPT_PROTOCOLS_STR, "http,https")
            // TLS verification is never turned off; a test CA may replace the system store.
            _ = ccurl_setopt_long(curl, CURLOPT_SSL_VERIFYPEER, 1)
            _ = ccurl_setopt_long(curl, CURLOPT_SSL_VERIFYHOST, 2)
            if let caFile = configuration.caFile { _ = ccurl_setopt_string(curl, CURLOPT_CAINFO, caFile) }
            if let proxy = configuration.proxy { _ = ccurl_setopt_string(curl, CURLOPT_PROXY, proxy) }
            _ = ccurl_setopt_pointer(curl, CURLOPT_ERRORBUFFER, errors.baseAddress)
            _ = ccurl_setopt_slist(curl, CURLOPT_HTTPHEADER, headerList)
            _ = ccurl_setopt_pointer(curl, CURLOPT_WRITEDATA, context.toOpaque())
            _ = ccurl_setopt_pointer(curl, CURLOPT_HEADERDATA, context.toOpaque())
            _ = ccurl_setopt_write_function(curl) { pointer, size, count, userdata in
                guard let userdata else { return 0 }
                let accumulator = Unmanaged<Accumulator>.fromOpaque(userdata).takeUnretainedValue()
                let total = size * count
                // Taking less than was delivered makes curl end the transfer (CURLE_WRITE_ERROR).
                if accumulator.statusOnly {
                    accumulator.endedAtBody = true
                    return 0
                }
                guard accumulator.body.count + total <= accumulator.limit else {
                    accumulator.exceededLimit = true
                    return 0
                }
                pointer.withMemoryRebound(to: UInt8.self, capacity: total) {
                    accumulator.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: total))
                }
                return total
            }
            _ = ccurl_setopt_header_function(curl) { pointer, size, count, userdata in
                guard let userdata else { return 0 }
                let accumulator = Unmanaged<Accumulator>.fromOpaque(userdata).takeUnretainedValue()
                let total = size * count
                let line = pointer.withMemoryRebound(to: UInt8.self, capacity: total) {
                    String(decoding: UnsafeBufferPointer(start: $0, count: total), as: UTF8.self)
                }
                accumulator.headerLine(line)
                return total
            }
            if let body = request.body {
                // COPYPOSTFIELDS copies the bytes, so `body` need not outlive this call.
                _ = ccurl_setopt_long(curl, CURLOPT_POSTFIELDSIZE, body.count)
                body.withUnsafeBytes { raw in
                    _ = ccurl_setopt_pointer(
                        curl,
                        CURLOPT_COPYPOSTFIELDS,
                        UnsafeMutableRawPointer(mutating: raw.baseAddress)
                    )
                }
            }
            return curl_easy_perform(curl)
        }
        if accumulator.exceededLimit {
            throw HTTPClientError(
                kind: .other,
                code: Int32(code.rawValue),
                message: "the response body was larger than \(configuration.maxResponseBytes) bytes"
            )
        }
        // A status-only caller ended the transfer itself once the body began: the answer was received whole up
        // to there.
        guard code == CURLE_OK || (accumulator.endedAtBody && code == CURLE_WRITE_ERROR) else {
            let detail = errorBuffer.withUnsafeBufferPointer { buffer in
                buffer.baseAddress.map { String(cString: $0) } ?? ""
            }
            let message = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
            throw HTTPClientError(kind: Self.kind(of: code), code: Int32(code.rawValue), message: message)
        }
        var status = 0
        _ = ccurl_getinfo_long(curl, CURLINFO_RESPONSE_CODE, &status)
        return HTTPClientResponse(status: status, headers: accumulator.headers, body: accumulator.body)
    }

    private static func kind(of code: CURLcode) -> HTTPClientError.Kind {
        switch code {
        case CURLE_OPERATION_TIMEDOUT: .timedOut
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_SEND_ERROR,
            CURLE_RECV_ERROR, CURLE_GOT_NOTHING:
            .connectionFailed
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM:
            .tls
        default: .other
        }
    }
}

/// Collects what curl's callbacks deliver during one `curl_easy_perform` on the calling thread.
private final class Accumulator {
    /// Most body bytes taken (`HTTPClient.Configuration.maxResponseBytes`).
    let limit: Int
    /// `HTTPClient.Configuration.readsStatusOnly`.
    let statusOnly: Bool
    var exceededLimit = false
    /// A status-only transfer was ended at its body.
    var endedAtBody = false
    var body: [UInt8] = []
    var headers: [(name: String, value: String)] = []

    init(limit: Int, statusOnly: Bool) {
        self.limit = limit
        self.statusOnly = statusOnly
    }

    func headerLine(_ line: String) {
        // A new status line (after a 100 Continue or a proxy CONNECT) starts a new header block.
        if line.hasPrefix("HTTP/") {
            headers.removeAll()
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = line[..<colon].lowercased()
        let value = String(line[line.index(after: colon)...]).trimmed()
        headers.append((name, value))
    }
}

/// Holds the raw CURL pointer inside the handle's Mutex.
struct CurlPointer: ~Copyable {
    let pointer: UnsafeMutableRawPointer
    init(_ pointer: UnsafeMutableRawPointer) { self.pointer = pointer }
}

extension String {
    /// Without the spaces, tabs and CR/LF around a header value.
    fileprivate func trimmed() -> String {
        let blank: Set<Character> = [" ", "\t", "\r", "\n", "\r\n"]
        var result = Substring(self)
        while let first = result.first, blank.contains(first) { result.removeFirst() }
        while let last = result.last, blank.contains(last) { result.removeLast() }
        return String(result)
    }
}
