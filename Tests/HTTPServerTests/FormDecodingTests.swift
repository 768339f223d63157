import Testing

@testable import HTTPServer

@Suite("FormDecoding")
struct FormDecodingTests {
    @Test func decodesQueries() {
        let items = FormDecoding.items("a=1&b=x+y&c=%3D%3d&flag&&d=%zz")
        #expect(items.map(\.name) == ["a", "b", "c", "flag", "d"])
        #expect(items.map(\.value) == ["1", "x y", "==", "", "%zz"])
    }

    @Test func pathSegmentsRejectEncodedSeparatorsAndBadEscapes() {
        #expect(FormDecoding.decodePathSegment("a%20b") == "a b")
        #expect(FormDecoding.decodePathSegment("%2e%2e") == "..")
        #expect(FormDecoding.decodePathSegment("a%2fb") == nil)
        #expect(FormDecoding.decodePathSegment("a%5Cb") == nil)
        #expect(FormDecoding.decodePathSegment("a%00") == nil)
        #expect(FormDecoding.decodePathSegment("a%4") == nil)
    }
}
