import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A small structured logger in the shape of swift-log: a label, seven levels and metadata.
///
/// Each event is one JSON object on one line of standard error, written with a single `write(2)` so lines from
/// different threads never interleave, and dropped (and counted) when the reader has no room (`LineWriter`).
/// Messages are constant; data goes into metadata. Callers must never put a raw token, JWT, key or payment secret
/// into a message or metadata value.
public struct Logger: Sendable {
    /// Severity, lowest first, as in swift-log.
    public enum Level: Int, Sendable, Comparable, CaseIterable {
        case trace, debug, info, notice, warning, error, critical

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }

        /// The name lines carry (`"info"`); a switch, since interpolating the case reflects on every line.
        public var name: String {
            switch self {
            case .trace: "trace"
            case .debug: "debug"
            case .info: "info"
            case .notice: "notice"
            case .warning: "warning"
            case .error: "error"
            case .critical: "critical"
            }
        }

        /// Parses `"info"`, `"warning"`, ...; nil for anything else.
        public init?(name: String) {
            guard let level = Level.allCases.first(where: { $0.name == name.lowercased() }) else { return nil }
            self = level
        }
    }

    /// Where lines go; standard error unless a test captures them.
    public struct Sink: Sendable {
        let write: @Sendable (String) -> Void

        public init(_ write: @escaping @Sendable (String) -> Void) { self.write = write }

        /// Standard error, as far as its reader keeps up (`LineWriter`).
        public static let standardError = Sink { LineWriter.standardError.write($0) }
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
        // Built by hand rather than with JSONSerialization: it runs for every request at info level, and
        // JSONSerialization's sorted keys compare through ICU collation, which cost more than the request.
        var fields: [(key: String, value: String)] = []
        fields.reserveCapacity(metadata.count + extra.count + 4)
        for (key, value) in metadata where extra[key] == nil && !Self.isReserved(key) {
            fields.append((key, value))
        }
        for (key, value) in extra where !Self.isReserved(key) { fields.append((key, value)) }
        fields.append(("level", level.name))
        fields.append(("message", message))
        fields.append(("label", label))
        fields.append(("time", Self.timestamp()))
        // Sorted by UTF-8 bytes: a stable order, so lines are easy to read and diff.
        fields.sort { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        var line: [UInt8] = []
        line.reserveCapacity(256)
        line.append(UInt8(ascii: "{"))
        for (index, field) in fields.enumerated() {
            if index > 0 { line.append(UInt8(ascii: ",")) }
            Self.appendJSONString(field.key, to: &line)
            line.append(UInt8(ascii: ":"))
            Self.appendJSONString(field.value, to: &line)
        }
        line.append(UInt8(ascii: "}"))
        sink.write(String(decoding: line, as: UTF8.self))
    }

    /// The keys every line sets itself; metadata cannot replace them.
    private static func isReserved(_ key: String) -> Bool {
        key == "level" || key == "message" || key == "label" || key == "time"
    }

    /// A JSON string with the escapes JSONSerialization writes (including `\/`), so lines read as before.
    static func appendJSONString(_ text: String, to line: inout [UInt8]) {
        line.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            let escaped: UInt8
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): escaped = byte
            case 0x08: escaped = UInt8(ascii: "b")
            case 0x0C: escaped = UInt8(ascii: "f")
            case 0x0A: escaped = UInt8(ascii: "n")
            case 0x0D: escaped = UInt8(ascii: "r")
            case 0x09: escaped = UInt8(ascii: "t")
            case 0x00..<0x20:
                line.append(UInt8(ascii: "\\"))
                line.append(UInt8(ascii: "u"))
                line.append(UInt8(ascii: "0"))
                line.append(UInt8(ascii: "0"))
                line.append(hexDigit(byte >> 4))
                line.append(hexDigit(byte & 0x0F))
                continue
            default:
                line.append(byte)
                continue
            }
            line.append(UInt8(ascii: "\\"))
            line.append(escaped)
        }
        line.append(UInt8(ascii: "\""))
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    public func trace(_ message: String, _ extra: [String: String] = [:]) { log(.trace, message, extra) }
    public func debug(_ message: String, _ extra: [String: String] = [:]) { log(.debug, message, extra) }
    public func info(_ message: String, _ extra: [String: String] = [:]) { log(.info, message, extra) }
    public func notice(_ message: String, _ extra: [String: String] = [:]) { log(.notice, message, extra) }
    public func warning(_ message: String, _ extra: [String: String] = [:]) { log(.warning, message, extra) }
    public func error(_ message: String, _ extra: [String: String] = [:]) { log(.error, message, extra) }
    public func critical(_ message: String, _ extra: [String: String] = [:]) { log(.critical, message, extra) }

    /// RFC 3339 UTC with milliseconds, written digit by digit (no Foundation formatting on every line).
    private static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var parts = tm()
        var seconds = now.tv_sec
        gmtime_r(&seconds, &parts)
        var text: [UInt8] = []
        text.reserveCapacity(24)
        func digits(_ value: Int, _ count: Int) {
            var divisor = 1
            for _ in 1..<count { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                text.append(UInt8(ascii: "0") + UInt8(rest / divisor % 10))
                rest %= divisor
                divisor /= 10
            }
        }
        digits(Int(parts.tm_year) + 1900, 4)
        text.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mon) + 1, 2)
        text.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mday), 2)
        text.append(UInt8(ascii: "T"))
        digits(Int(parts.tm_hour), 2)
        text.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_min), 2)
        text.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_sec), 2)
        text.append(UInt8(ascii: "."))
        digits(Int(now.tv_nsec / 1_000_000), 3)
        text.append(UInt8(ascii: "Z"))
        return String(decoding: text, as: UTF8.self)
    }
}
