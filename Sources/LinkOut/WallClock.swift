import Foundation

/// Wall-clock time as Apple counts it in tokens and reports: milliseconds since 1970.
public enum WallClock {
    public static func nowMilliseconds() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }
}
