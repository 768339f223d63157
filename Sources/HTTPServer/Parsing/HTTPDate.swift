#if canImport(Glibc)
import Glibc
#endif

/// Formats IMF-fixdate (RFC 9110 §5.6.7) for the `Date` header, reformatting at most once per second.
/// Each event loop owns one, so no locking is needed.
struct HTTPDate {
    private var second = 0
    private var cached: [UInt8] = []

    /// The current date as bytes, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
    mutating func bytes() -> [UInt8] {
        let now = time(nil)
        if now != second || cached.isEmpty {
            second = now
            cached = Array(Self.format(now).utf8)
        }
        return cached
    }

    static func format(_ seconds: Int) -> String {
        var value = seconds
        var parts = tm()
        gmtime_r(&value, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ number: Int32) -> String { number < 10 ? "0\(number)" : "\(number)" }
        return
            "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }

    /// Parses IMF-fixdate; nil for the obsolete formats (a client then simply gets a full response).
    static func parse(_ text: String) -> Int? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[5] == "GMT", let day = Int32(parts[1]), let year = Int32(parts[3]) else {
            return nil
        }
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard let month = months.firstIndex(of: String(parts[2])) else { return nil }
        let clock = parts[4].split(separator: ":")
        guard clock.count == 3, let hour = Int32(clock[0]), let minute = Int32(clock[1]), let second = Int32(clock[2])
        else { return nil }
        // RFC 9110 §5.6.7: a four-digit year. Anything else is not a date (a year of -2147483648, sent by anyone
        // in If-Modified-Since, overflowed `year - 1900` and stopped the server). Nor is a time that does not
        // exist (`25:61:61`: `timegm` rolled it over into a date, and an invalid date must be ignored, §13.1.3),
        // nor a day past its month's end (`31 Feb`).
        guard (0...9999).contains(year), (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute),
            (0...59).contains(second)
        else { return nil }
        var value = tm()
        value.tm_year = year - 1900
        value.tm_mon = Int32(month)
        value.tm_mday = day
        value.tm_hour = hour
        value.tm_min = minute
        value.tm_sec = second
        let seconds = timegm(&value)
        // `timegm` normalised the fields: a day it moved into the next month did not exist.
        guard value.tm_mday == day, value.tm_mon == Int32(month) else { return nil }
        return seconds
    }
}
