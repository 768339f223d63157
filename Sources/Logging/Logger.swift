import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A small structured logger in the shape of swift-log: a label, seven levels and metadata.
///
/// Each event is one JSON object on one line of standard error, written with a single `write(2)` so lines from
/// different threads never interleave. Messages are constant; data goes into metadata. Callers must never put a
/// raw token, JWT, key or payment secret into a message or metadata value.
public struct Logger: Sendable {
    /// Severity, lowest first, as in swift-log.
    public enum Level: Int, Sendable, Comparable, CaseIterable {
        case trace, debug, info, notice, warning, error, critical

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }

        /// Parses `"info"`, `"warning"`, ...; nil for anything else.
        public init?(name: String) {
            guard let level = Level.allCases.first(where: { "\($0)" == name.lowercased() }) else { return nil }
            self = level
        }
    }

    /// Where lines go; standard error unless a test captures them.
    public struct Sink: Sendable {
        let write: @Sendable (String) -> Void

        public init(_ write: @escaping @Sendable (String) -> Void) { self.write = write }

        public static let standardError = Sink { line in
            var bytes = Array(line.utf8)
            bytes.append(0x0A)
            bytes.withUnsafeBytes { raw in
                guard let base = raw.baseAddress else { return }
                var offset = 0
                while offset < raw.count {
                    let written = Glibc.write(STDERR_FILENO, base + offset, raw.count - offset)
                    if written <= 0 { return }
                    offset += written
                }
            }
        }
    }

    public let label: String
    public var level: Level
    public var metadata: [String: String]
    private let sink: Sink

    public init(label: String, level: Level = .info, metadata: [String: String] = [:], sink: Sink = .standardError) {
        self.label = label
        self.level = level
        self.metadata = metadata
        self.sink = sink
    }

    public subscript(metadataKey key: String) -> String? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(_ level: Level, _ message: String, _ extra: [String: String] = [:]) {
        guard level >= self.level else { return }
        var object: [String: String] = metadata.merging(extra) { _, new in new }
        object["level"] = "\(level)"
        object["message"] = message
        object["label"] = label
        object["time"] = Self.timestamp()
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
        sink.write(String(decoding: data, as: UTF8.self))
    }

    public func trace(_ message: String, _ extra: [String: String] = [:]) { log(.trace, message, extra) }
    public func debug(_ message: String, _ extra: [String: String] = [:]) { log(.debug, message, extra) }
    public func info(_ message: String, _ extra: [String: String] = [:]) { log(.info, message, extra) }
    public func notice(_ message: String, _ extra: [String: String] = [:]) { log(.notice, message, extra) }
    public func warning(_ message: String, _ extra: [String: String] = [:]) { log(.warning, message, extra) }
    public func error(_ message: String, _ extra: [String: String] = [:]) { log(.error, message, extra) }
    public func critical(_ message: String, _ extra: [String: String] = [:]) { log(.critical, message, extra) }

    private static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var parts = tm()
        var seconds = now.tv_sec
        gmtime_r(&seconds, &parts)
        let milliseconds = now.tv_nsec / 1_000_000
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
            parts.tm_year + 1900,
            parts.tm_mon + 1,
            parts.tm_mday,
            parts.tm_hour,
            parts.tm_min,
            parts.tm_sec,
            milliseconds
        )
    }
}
