// libFuzzer target `apple-report-error`: Apple's answer to a sent report (status, `Retry-After`, error body) as
// the reporting pass reads it, and Retrieve External Purchase Report's answer when a 400 is settled. The input is
// the status line, a line feed, the Retry-After value, a line feed, then the body.
import ExternalPurchase
import LinkOut
import Outbound

/// A fixed time (2026-01-01) and backoff keep every run the same.
let now: Int64 = 1_767_225_600_000
let requestIdentifier = "3f1c8a52-6b0e-4d2a-9e61-2b7f0c5d9a14"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let lines = bytes.split(separator: UInt8(ascii: "\n"), maxSplits: 2, omittingEmptySubsequences: false)
    guard lines.count == 3 else { return 0 }
    // libcurl hands over a three-digit status.
    guard let status = Int(String(decoding: lines[0], as: UTF8.self)), (100...999).contains(status) else { return 0 }
    let retryAfter = lines[1].isEmpty ? nil : String(decoding: lines[1], as: UTF8.self)
    let body = Array(lines[2])
    let outcome = ExternalPurchaseAPIClient.outcome(status: status, body: body, retryAfter: retryAfter, now: now)
    for attempts: Int64 in [0, 3] {
        let answer = AppleAnswer.interpret(outcome, attempts: attempts, sentAt: now, backoff: { _ in 5_000 })
        _ = AppleAnswer.settle(
            answer,
            retrieved: .success((status, String(decoding: body, as: UTF8.self))),
            requestIdentifier: requestIdentifier,
            attempts: attempts,
            sentAt: now,
            backoff: { _ in 5_000 }
        )
    }
    return 0
}
