import Foundation

/// Where time comes from. Code that decides by time (reporting deadlines, token dates, sessions, rate limits,
/// code expiry) takes a clock, so tests move time instead of sleeping.
public struct Clock: Sendable {
    private let milliseconds: @Sendable () -> Int64

    public init(milliseconds: @escaping @Sendable () -> Int64) {
        self.milliseconds = milliseconds
    }

    /// Wall-clock time as Apple counts it in tokens and reports: milliseconds since 1970.
    public func nowMilliseconds() -> Int64 { milliseconds() }

    /// Whole seconds since 1970.
    public func nowSeconds() -> Int64 { milliseconds() / 1000 }

    /// The system's wall clock.
    public static let system = Clock { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    /// A clock that always answers `milliseconds` (tests).
    public static func fixed(_ milliseconds: Int64) -> Clock { Clock { milliseconds } }
}
