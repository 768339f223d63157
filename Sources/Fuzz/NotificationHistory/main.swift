// libFuzzer target `notification-history`: a page of Apple's notification history (Get Notification History's
// 200 body) as recovery reads it: the page, the pagination token it sends back in the next URL, and each signed
// payload through the verifier with the fixed test root.
import ExternalPurchase
import LinkOutFuzzSupport

let verifier = SignedPayloadVerifier(trustedRoots: [FuzzChain.root])

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard case .success(let page) = AppStoreServerAPIClient.page(bytes) else { return 0 }
    if let token = page.paginationToken {
        _ = AppStoreServerAPIClient.percentEncoded(token)
    }
    for payload in page.signedPayloads {
        _ = try? verifier.verify(payload)
    }
    return 0
}
