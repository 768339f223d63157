// libFuzzer target `paddle-notification`: a Paddle notification body as the decoder reads it once the signature
// passed (and again from storage when the event is acted on): transactions, subscriptions, anything else.
import Payments

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let notification = try? PaddleNotification.decode(bytes) {
        _ = notification.eventId.utf8.count + notification.eventType.utf8.count
    }
    return 0
}
