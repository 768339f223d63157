import CCurl
import Synchronization

/// A blocking HTTP client on libcurl. Call it from a thread that may block (a background service), never from
/// an event loop. A small pool of easy handles keeps connections warm; each handle is used by one thread at a
/// time. `CURLOPT_NOSIGNAL` is set because the process is multi-threaded.
public final class HTTPClient: Sendable {
    public let configuration: Configuration
    private let pool: Mutex<[EasyHandle]>

    public init(configuration: Configuration = Configuration()) {
        _ = Self.globalInit
        self.configuration = configuration
        pool = Mutex([])
    }

    /// curl_global_init must run once before any handle exists; a lazy static gives exactly-once semantics.
    private static let globalInit: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    public func perform(_ request: HTTPClientRequest) throws(HTTPClientError) -> HTTPClientResponse {
        let handle: EasyHandle
        if let pooled = pool.withLock({ $0.popLast() }) {
            handle = pooled
        } else {
            guard let fresh = EasyHandle() else {
                throw HTTPClientError(kind: .other, code: -1, message: "curl_easy_init failed")
            }
            handle = fresh
        }
        defer {
            pool.withLock { handles in
                if handles.count < configuration.poolSize { handles.append(handle) }
            }
        }
        return try handle.perform(request, configuration: configuration)
    }
}
