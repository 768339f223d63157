import Domain
import Testing

@testable import ExternalPurchase

/// `Retry-After` on Apple's 429: UNIX ms, delay-seconds or an IMF-fixdate, and nothing else.
@Suite("RetryAfter")
struct RetryAfterTests {
    let now: Int64 = 1_767_225_600_000

    @Test func readsApplesMillisecondsDelaySecondsAndAnHTTPDate() {
        #expect(RetryAfter.unixMilliseconds("1767225660000", now: now) == 1_767_225_660_000)
        #expect(RetryAfter.unixMilliseconds(" 120 ", now: now) == now + 120_000)
        #expect(RetryAfter.unixMilliseconds("0", now: now) == now)
        #expect(RetryAfter.unixMilliseconds("Thu, 01 Jan 2026 00:01:00 GMT", now: now) == 1_767_225_660_000)
        #expect(RetryAfter.imfFixdate(Array("Sun, 06 Nov 1994 08:49:37 GMT".utf8)) == 784_111_777)
        #expect(RetryAfter.imfFixdate(Array("Tue, 29 Feb 2028 23:59:60 GMT".utf8)) == 1_835_481_600)
        #expect(RetryAfter.unixMilliseconds(nil, now: now) == nil)
        #expect(RetryAfter.unixMilliseconds("", now: now) == nil)
    }

    /// A time in the past is now; one further off than an hour is an hour from now: a 429 saying 2099 (or a UNIX
    /// time in seconds, read as a delay of decades) stopped every report for as long as it said.
    @Test func theWaitIsNeverLongerThanAnHour() {
        let hour = RetryAfter.longestWaitMilliseconds
        #expect(RetryAfter.unixMilliseconds("Sun, 06 Nov 1994 08:49:37 GMT", now: now) == now)
        #expect(RetryAfter.unixMilliseconds("Thu, 01 Jan 2099 00:00:00 GMT", now: now) == now + hour)
        #expect(RetryAfter.unixMilliseconds("99999999999999", now: now) == now + hour)
        #expect(RetryAfter.unixMilliseconds("1796510900", now: now) == now + hour)
        #expect(RetryAfter.unixMilliseconds("\(now + 600_000)", now: now) == now + 600_000)
        #expect(hour == 3_600_000)
    }

    /// Found by the `apple-report-error` fuzz target: Int64.min as delay-seconds overflowed when turned into
    /// milliseconds, so one odd 429 from Apple (or whatever answers in its place) stopped the server.
    @Test func aNegativeDelayIsNoAnswerNotAnOverflow() {
        #expect(RetryAfter.unixMilliseconds("-9223372036854775808", now: now) == nil)
        #expect(RetryAfter.unixMilliseconds("-1", now: now) == nil)
        #expect(
            ExternalPurchaseAPIClient.outcome(
                status: 429,
                body: [],
                retryAfter: "-9223372036854775808",
                now: now,
                sent: "3f1c8a52-6b0e-4d2a-9e61-2b7f0c5d9a14"
            ) == .rateLimited(retryAt: nil)
        )
    }

    /// Found by the same target: `DateFormatter` leaked 128 bytes on each of some malformed dates. Only the
    /// IMF-fixdate form is read now, by hand; other forms and anything out of range are no answer.
    @Test func onlyAWellFormedIMFFixdateIsADate() {
        for text in [
            "Thursday, 01-Jan-26 00:01:00 GMT", "Thu Jan  1 00:01:00 2026", "Thu, 01 Jan 2026 00:01:00 UTC",
            "Thu, 32 Jan 2026 00:01:00 GMT", "Thu, 01 Jan 2026 24:00:00 GMT", "Thu, 01 Foo 2026 00:01:00 GMT",
            "Thu, 01 Jan 2026 00:01:00 GMT ", "Xyz, 01 Jan 2026 00:01:00 GMT", "Thu, 0x Jan 2026 00:01:00 GMT",
            "-1\u{E9}6212643802",
        ] {
            #expect(RetryAfter.imfFixdate(Array(text.utf8)) == nil, "\(text)")
        }
        #expect(RetryAfter.imfFixdate(Array("Sat, 01 Jan 0000 00:00:00 GMT".utf8)) == -62_167_219_200)
    }
}
