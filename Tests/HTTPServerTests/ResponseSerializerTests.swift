import Testing

@testable import HTTPServer

@Suite("ResponseSerializer")
struct ResponseSerializerTests {
    /// A value taken from elsewhere (a provider's payment page address) with a CR, LF or NUL in it goes out with
    /// spaces there: it can never end its field and start another (response splitting).
    @Test func aFieldValueCannotEndItsFieldOrStartAnother() {
        var headers = HTTPHeaders()
        headers.add(name: "Location", value: "https://pay.example/x\r\nSet-Cookie: evil=1\u{0}")
        var output: [UInt8] = []
        ResponseSerializer.append(
            HTTPResponse(status: .seeOther, headers: headers),
            to: &output,
            date: Array("Sat, 05 Dec 2026 20:00:00 GMT".utf8),
            keepAlive: true,
            omitBody: false
        )
        let text = String(decoding: output, as: UTF8.self)
        #expect(text.contains("\r\nLocation: https://pay.example/x  Set-Cookie: evil=1 \r\n"))
        #expect(!text.contains("\r\nSet-Cookie"))
        #expect(!output.contains(0))
    }
}
