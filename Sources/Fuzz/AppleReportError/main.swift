// libFuzzer target `apple-report-error`: Apple's answer to a sent report (status, `Retry-After`, error body) as
// the reporting pass reads it, and Retrieve External Purchase Report's answer when a 400 is settled. The input is
// the status line, a line feed, the Retry-After value, a line feed, then the body. A 400's body is also read as
// Apple's `SendReportErrorResponse` and classified against a line-item report and a `DUPLICATE_TOKEN` report.
import Domain
import ExternalPurchase
import LinkOut
import Outbound
import Storage

/// A fixed time (2026-01-01) and backoff keep every run the same.
let now: Int64 = 1_767_225_600_000
let requestIdentifier: RequestIdentifier = "3f1c8a52-6b0e-4d2a-9e61-2b7f0c5d9a14"

/// Reports as the outbox holds them: one with two line items (`li_1`, `li_2`), one `DUPLICATE_TOKEN`.
let sentReports: [StoredReport] = {
    let item = { (id: String) in
        #"{"lineItemId":"\#(id)","creationDate":1767225000000,"eventType":"BUY","productType":"ONE_TIME_BUY","#
            + #""productIdentifier":"pro.lifetime","quantity":1,"amountTaxInclusive":29990,"#
            + #""amountTaxExclusive":25202,"taxAmount":4788,"netAmountTaxExclusive":25202,"pricingCurrency":"EUR","#
            + #""reportingCurrency":"EUR","taxCountry":"DEU"}"#
    }
    let lineItems =
        #"{"requestIdentifier":"\#(requestIdentifier)","externalPurchaseId":"fuzz","#
        + #""status":"LINE_ITEM","lineItems":[\#(item("li_1")),\#(item("li_2"))]}"#
    let duplicate =
        #"{"requestIdentifier":"\#(requestIdentifier)","externalPurchaseId":"fuzz","#
        + #""status":"DUPLICATE_TOKEN"}"#
    return [(ReportStatus.lineItem, lineItems), (.duplicateToken, duplicate)].map { status, body in
        StoredReport(
            requestIdentifier: requestIdentifier,
            externalPurchaseId: "fuzz",
            environment: .production,
            bundleId: "com.example",
            status: status,
            body: body,
            state: .rejected,
            attempts: 1,
            nextAttemptAt: now,
            createdAt: now
        )
    }
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let lines = bytes.split(separator: UInt8(ascii: "\n"), maxSplits: 2, omittingEmptySubsequences: false)
    guard lines.count == 3 else { return 0 }
    // libcurl hands over a three-digit status.
    guard let status = Int(String(decoding: lines[0], as: UTF8.self)), (100...999).contains(status) else { return 0 }
    let retryAfter = lines[1].isEmpty ? nil : String(decoding: lines[1], as: UTF8.self)
    let body = Array(lines[2])
    let outcome = ExternalPurchaseAPIClient.outcome(
        status: status,
        body: body,
        retryAfter: retryAfter,
        now: now,
        sent: requestIdentifier
    )
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
    let text = String(decoding: body, as: UTF8.self)
    for report in sentReports { _ = AppleRejection.classify(body: text, report: report) }
    return 0
}
