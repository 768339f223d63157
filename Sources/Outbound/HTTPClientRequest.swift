/// An outbound request.
public struct HTTPClientRequest: Sendable {
    public var method: String
    public var url: String
    /// Header fields in order. Values may hold secrets (a bearer JWT); the client never logs them.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]?

    public init(method: String, url: String, headers: [(name: String, value: String)] = [], body: [UInt8]? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// An outbound response.
public struct HTTPClientResponse: Sendable {
    public var status: Int
    /// Header fields, names lowercased.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? {
        let key = name.lowercased()
        return headers.first { $0.name == key }?.value
    }
}

/// A request that got no HTTP response: connection refused, TLS failure, timeout, ...
public struct HTTPClientError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        case timedOut
        case connectionFailed
        case tls
        case other
    }

    public var kind: Kind
    /// libcurl's code and message. Never contains request headers.
    public var code: Int32
    public var message: String

    public init(kind: Kind, code: Int32, message: String) {
        self.kind = kind
        self.code = code
        self.message = message
    }

    /// As logs and `linkout check` show it to an operator: what failed, libcurl's code to look up, its message.
    public var description: String {
        let what =
            switch kind {
            case .timedOut: "timed out"
            case .connectionFailed: "connection failed"
            case .tls: "TLS failed"
            case .other: "request failed"
            }
        return "\(what) (curl \(code)): \(message)"
    }
}
