import Domain

/// Paddle's timestamps: RFC 3339 in UTC with up to microseconds, `2024-04-12T10:18:49.738971Z` (as in Paddle's SDK
/// fixtures), read into UNIX milliseconds without Foundation's date formatters, whose handling of six fraction digits
/// differs between platforms. A numeric offset (`+02:00`) is accepted too. Digits beyond milliseconds are cut, never
/// rounded up into the next second.
enum PaddleTimestamp {
    static func milliseconds(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes[4] == 0x2D, bytes[7] == 0x2D, bytes[10] == 0x54 || bytes[10] == 0x74,
            bytes[13] == 0x3A, bytes[16] == 0x3A
        else { return nil }
        func number(_ from: Int, _ count: Int) -> Int64? {
            var value: Int64 = 0
            for index in from..<(from + count) {
                let byte = bytes[index]
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            return value
        }
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2), let hour = number(11, 2),
            let minute = number(14, 2), let second = number(17, 2), hour < 24, minute < 60, second < 61,
            let days = UTCDate.realDays(year: year, month: month, day: day)
        else { return nil }
        var index = 19
        var millis: Int64 = 0
        if bytes[index] == 0x2E {
            index += 1
            var digits = 0
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                if digits < 3 { millis = millis * 10 + Int64(bytes[index] - 0x30) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 3) { millis *= 10 }
        }
        guard index < bytes.count else { return nil }
        var offsetMinutes: Int64 = 0
        if bytes[index] == 0x5A || bytes[index] == 0x7A {
            guard index + 1 == bytes.count else { return nil }
        } else {
            guard bytes[index] == 0x2B || bytes[index] == 0x2D, index + 6 == bytes.count, bytes[index + 3] == 0x3A,
                let hours = number(index + 1, 2), let minutes = number(index + 4, 2), hours < 24, minutes < 60
            else { return nil }
            offsetMinutes = (hours * 60 + minutes) * (bytes[index] == 0x2B ? 1 : -1)
        }
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetMinutes * 60
        return seconds * 1000 + millis
    }
}
