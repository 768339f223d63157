// libFuzzer target `paddle-adjustment`: an `adjustment.*` notification (a refund or chargeback of Paddle's own),
// read through the same decoder as every notification. The input is the adjustment object; the envelope around it
// is fixed, so every run reaches the adjustment's own fields (items, totals, amounts as decimal text).
import Payments

let head = Array(
    #"{"event_id":"evt_01fuzz","event_type":"adjustment.updated","occurred_at":"2026-01-01T00:00:00Z","data":"#.utf8
)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let body = head + Array(UnsafeBufferPointer(start: data, count: size)) + [UInt8(ascii: "}")]
    if let notification = try? PaddleNotification.decode(body) {
        _ = notification.eventId.utf8.count
    }
    return 0
}
