import Foundation

/// `Retry-After` on a 429 from Apple (or a 429 or 503 from the developer's webhook receiver), as the UNIX ms when
/// the next request may go. Apple's App Store Server API sends a UNIX time in milliseconds; RFC 9110 §10.2.3 allows
/// delay-seconds or an HTTP date. All three are understood; anything else (a negative delay, another date format)
/// is no answer, and the caller backs off. Whatever it says, the wait is at most `longestWaitMilliseconds`.
package enum RetryAfter {
    /// Numbers above this are UNIX ms (Apple's form); below it, delay-seconds.
    static let smallestUnixMilliseconds: Int64 = 100_000_000_000
    /// The longest pause a `Retry-After` can bring about. Apple's rate limits are counted per hour; a later
    /// time (a mistake, another form of date, a proxy's) would stop every report for as long as it says, with
    /// Apple's 10-day notice running.
    package static let longestWaitMilliseconds: Int64 = 3_600_000

    package static func unixMilliseconds(_ header: String?, now: Int64) -> Int64? {
        guard let header = header?.trimmingCharacters(in: .whitespaces), !header.isEmpty else { return nil }
        let asked: Int64?
        if let number = Int64(header) {
            // A negative delay is not one (and Int64.min times 1000 overflowed, stopping the server).
            guard number >= 0 else { return nil }
            // Delay-seconds are below `smallestUnixMilliseconds`: times 1000 they cannot overflow.
            asked = number > smallestUnixMilliseconds ? number : now + number * 1000
        } else {
            asked = imfFixdate(Array(header.utf8)).map { $0 * 1000 }
        }
        return asked.map { min(max($0, now), now + longestWaitMilliseconds) }
    }

    /// UNIX seconds of an IMF-fixdate such as `Thu, 01 Jan 2026 00:01:00 GMT` (RFC 9110 §5.6.7), the date form
    /// HTTP senders must use; nil for anything else. Read by hand rather than with `DateFormatter`, which leaked
    /// 128 bytes on each of some malformed values.
    static func imfFixdate(_ text: [UInt8]) -> Int64? {
        guard text.count == 29, text[3] == UInt8(ascii: ","), text[4] == space, text[7] == space,
            text[11] == space, text[16] == space, text[19] == colon, text[22] == colon, text[25] == space,
            Array(text[26...]) == Array("GMT".utf8),
            weekdays.contains(Array(text[0..<3])),
            let monthIndex = months.firstIndex(of: Array(text[8..<11])),
            let day = digits(text[5..<7]), let year = digits(text[12..<16]), let hour = digits(text[17..<19]),
            let minute = digits(text[20..<22]), let second = digits(text[23..<25]),
            (1...31).contains(day), hour < 24, minute < 60, second <= 60
        else { return nil }
        let days = daysSinceEpoch(year: year, month: Int64(monthIndex) + 1, day: day)
        return days * 86_400 + hour * 3_600 + minute * 60 + second
    }

    private static let space = UInt8(ascii: " ")
    private static let colon = UInt8(ascii: ":")
    private static let weekdays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].map { Array($0.utf8) }
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        .map { Array($0.utf8) }

    private static func digits(_ bytes: ArraySlice<UInt8>) -> Int64? {
        var value: Int64 = 0
        for byte in bytes {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        return value
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (the civil-from-days inverse, eras of 400 years).
    private static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shifted = month <= 2 ? year - 1 : year
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
