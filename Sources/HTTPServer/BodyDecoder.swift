/// Reads a request body framed by Content-Length or by chunked transfer coding (RFC 9112 §7.1).
package enum BodyDecoder {
    package enum Result: Sendable, Equatable {
        case incomplete
        case invalid(HTTPStatus)
        /// The body and the number of bytes its framing used.
        case body([UInt8], consumed: Int)
    }

    /// Longest chunk-size line (size and extensions) and largest trailer section accepted.
    static let maxChunkLineBytes = 1024
    static let maxTrailerBytes = 8 * 1024

    package static func decode(
        _ bytes: ArraySlice<UInt8>,
        framing: RequestParser.BodyFraming,
        maxBodyBytes: Int
    ) -> Result {
        switch framing {
        case .none:
            return .body([], consumed: 0)
        case .length(let length):
            guard bytes.count >= length else { return .incomplete }
            return .body(Array(bytes.prefix(length)), consumed: length)
        case .chunked:
            return decodeChunked(bytes, maxBodyBytes: maxBodyBytes)
        }
    }

    private static func decodeChunked(_ bytes: ArraySlice<UInt8>, maxBodyBytes: Int) -> Result {
        var body: [UInt8] = []
        var index = bytes.startIndex
        while true {
            guard let lineEnd = RequestParser.findCRLF(bytes, from: index) else {
                // A line ended by a bare LF never gets its CRLF: refuse it now, not after the body timeout.
                if bytes[index...].contains(UInt8(ascii: "\n")) { return .invalid(.badRequest) }
                return bytes.endIndex - index > maxChunkLineBytes ? .invalid(.badRequest) : .incomplete
            }
            if lineEnd - index > maxChunkLineBytes { return .invalid(.badRequest) }
            guard let size = chunkSize(bytes[index..<lineEnd]) else { return .invalid(.badRequest) }
            if size > maxBodyBytes - body.count { return .invalid(.contentTooLarge) }
            let dataStart = lineEnd + 2
            if size == 0 {
                return trailers(bytes, from: dataStart, body: body)
            }
            guard bytes.endIndex - dataStart >= size + 2 else { return .incomplete }
            guard bytes[dataStart + size] == UInt8(ascii: "\r"), bytes[dataStart + size + 1] == UInt8(ascii: "\n")
            else { return .invalid(.badRequest) }
            body.append(contentsOf: bytes[dataStart..<dataStart + size])
            index = dataStart + size + 2
        }
    }

    /// Skips the trailer section (fields are read but not kept) up to the empty line that ends the message.
    private static func trailers(_ bytes: ArraySlice<UInt8>, from start: Int, body: [UInt8]) -> Result {
        var index = start
        while true {
            guard let lineEnd = RequestParser.findCRLF(bytes, from: index) else {
                if bytes[index...].contains(UInt8(ascii: "\n")) { return .invalid(.badRequest) }
                return bytes.endIndex - start > maxTrailerBytes ? .invalid(.headerFieldsTooLarge) : .incomplete
            }
            if lineEnd - start > maxTrailerBytes { return .invalid(.headerFieldsTooLarge) }
            if lineEnd == index {
                return .body(body, consumed: lineEnd + 2 - bytes.startIndex)
            }
            let line = bytes[index..<lineEnd]
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex,
                line[line.startIndex..<colon].allSatisfy(isTokenByte)
            else { return .invalid(.badRequest) }
            index = lineEnd + 2
        }
    }

    /// `1*HEXDIG [ BWS ";" chunk-ext ]`; nil when malformed or absurdly large.
    private static func chunkSize(_ line: ArraySlice<UInt8>) -> Int? {
        var size = 0
        var digits = 0
        var index = line.startIndex
        while index < line.endIndex, let value = FormDecoding.hexValue(line[index]) {
            guard digits < 15 else { return nil }
            size = size << 4 | Int(value)
            digits += 1
            index += 1
        }
        guard digits > 0 else { return nil }
        while index < line.endIndex, line[index] == UInt8(ascii: " ") || line[index] == UInt8(ascii: "\t") {
            index += 1
        }
        if index < line.endIndex {
            guard line[index] == UInt8(ascii: ";") else { return nil }
            guard line[index...].allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else { return nil }
        }
        return size
    }
}
