// libFuzzer target `stripe-event`: a Stripe webhook body as the event decoder reads it once the signature
// passed (and again from storage when the event is processed).
import Payments

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let event = try? StripeEvent.decode(bytes) {
        _ = event.id.utf8.count + event.type.utf8.count
    }
    return 0
}
