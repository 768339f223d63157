// libFuzzer target `form`: `application/x-www-form-urlencoded` bodies and queries (the checkout, sign-in and
// dashboard forms, every landing query) and strict path-segment decoding.
import HTTPServer

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // The routes turn the body into text the same way before decoding it.
    let text = String(decoding: bytes, as: UTF8.self)
    for item in FormDecoding.items(Substring(text)) {
        _ = item.name.utf8.count + item.value.utf8.count
    }
    _ = FormDecoding.decode(bytes, plusIsSpace: false)
    // The router splits a path on the byte `/` and decodes each segment; no escape may turn one into two.
    for part in bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
        if let segment = FormDecoding.decodePathSegment(Substring(decoding: part, as: UTF8.self)) {
            precondition(!segment.utf8.contains(UInt8(ascii: "/")), "a path segment decoded to one with a slash")
        }
    }
    return 0
}
