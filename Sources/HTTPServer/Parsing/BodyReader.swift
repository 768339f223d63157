/// Reads one request body as its bytes arrive, framed by Content-Length or by chunked transfer coding (RFC 9112
/// §6.2, §7.1), against the route's limit. Each call takes what it can from the front of the input and keeps only
/// the decoded body, so a body costs its own size once (not the raw bytes and a decoded copy), and nothing is
/// decoded twice however the bytes are split.
///
/// Chunked framing counts against the limit: size lines, extensions, the CRLFs and trailers may add at most
/// `framingAllowance(for:)` to it (1 KiB plus 1/16 of the limit), so a body of many tiny chunks or long extensions
/// is a 413 as soon as it passes that, not a connection held until the body timeout.
package struct BodyReader: Sendable {
    package enum Progress: Sendable, Equatable {
        /// Everything offered was used; the body needs more.
        case needsMore
        /// The body is complete (`body` holds it); bytes after it belong to the next request.
        case done
        case invalid(HTTPStatus)
    }

    /// The outcome of decoding a whole body from one buffer (see `decode`).
    package enum Result: Sendable, Equatable {
        case incomplete
        case invalid(HTTPStatus)
        /// The body and the number of bytes its framing used.
        case body([UInt8], consumed: Int)
    }

    private enum State: Sendable {
        case length(remaining: Int)
        case chunkSizeLine
        case chunkData(remaining: Int)
        case chunkDataEnd
        /// Inside the trailer section, which has used `bytes` so far.
        case trailers(bytes: Int)
        case done
    }

    /// Longest chunk-size line (size and extensions) and largest trailer section accepted.
    static let maxChunkLineBytes = 1024
    static let maxTrailerBytes = 8 * 1024

    /// How many bytes chunked framing may add to a body of at most `limit` bytes.
    package static func framingAllowance(for limit: Int) -> Int { 1024 + limit / 16 }

    /// The body read so far; all of it once `read` answers `.done`.
    package private(set) var body: [UInt8] = []
    private var state: State
    private let maxBodyBytes: Int
    /// Bytes the body may take on the wire: the limit, plus the framing allowance when chunked.
    private let maxWireBytes: Int
    private var wireBytes = 0

    package init(framing: RequestParser.BodyFraming, maxBodyBytes: Int) {
        self.maxBodyBytes = maxBodyBytes
        switch framing {
        case .none:
            state = .done
            maxWireBytes = 0
        case .length(let length):
            state = .length(remaining: length)
            maxWireBytes = length
        case .chunked:
            state = .chunkSizeLine
            maxWireBytes = maxBodyBytes + Self.framingAllowance(for: maxBodyBytes)
        }
    }

    /// Takes what it can from the front of `input`: returns how many bytes were used (the caller drops them; a
    /// partial line is left in place until it is whole) and where the body stands.
    package mutating func read(_ input: ArraySlice<UInt8>) -> (consumed: Int, progress: Progress) {
        var index = input.startIndex
        while true {
            let step: Step
            switch state {
            case .done:
                return (index - input.startIndex, .done)
            case .length(let remaining):
                let count = min(remaining, input.endIndex - index)
                // The declared length is known and within the limit: one buffer of exactly that size, no copies.
                append(input[index..<index + count], expectedTotal: maxWireBytes, grow: false)
                index += count
                state = remaining == count ? .done : .length(remaining: remaining - count)
                step = remaining == count ? .advanced : .needsMore
            case .chunkSizeLine:
                step = readChunkSizeLine(input, at: &index)
            case .chunkData(let remaining):
                let count = min(remaining, input.endIndex - index)
                append(input[index..<index + count], expectedTotal: maxBodyBytes, grow: true)
                index += count
                state = remaining == count ? .chunkDataEnd : .chunkData(remaining: remaining - count)
                step = remaining == count ? .advanced : .needsMore
            case .chunkDataEnd:
                step = readChunkDataEnd(input, at: &index)
            case .trailers(let bytes):
                step = readTrailerLine(input, at: &index, sectionBytes: bytes)
            }
            switch step {
            case .advanced: continue
            case .needsMore: return (index - input.startIndex, .needsMore)
            case .invalid(let status): return (index - input.startIndex, .invalid(status))
            }
        }
    }

    /// Hands the body over, leaving the reader empty.
    package mutating func takeBody() -> [UInt8] {
        defer { body = [] }
        return body
    }

    /// Decodes a whole body from one buffer: for tests, the fuzzer and one-shot callers.
    package static func decode(
        _ bytes: ArraySlice<UInt8>,
        framing: RequestParser.BodyFraming,
        maxBodyBytes: Int
    ) -> Result {
        var reader = BodyReader(framing: framing, maxBodyBytes: maxBodyBytes)
        let (consumed, progress) = reader.read(bytes)
        switch progress {
        case .needsMore: return .incomplete
        case .invalid(let status): return .invalid(status)
        case .done: return .body(reader.takeBody(), consumed: consumed)
        }
    }

    // MARK: chunked framing

    private enum Step {
        case advanced
        case needsMore
        case invalid(HTTPStatus)
    }

    /// `chunk-size [ chunk-ext ] CRLF`.
    private mutating func readChunkSizeLine(_ input: ArraySlice<UInt8>, at index: inout Int) -> Step {
        guard let lineEnd = RequestParser.findCRLF(input, from: index) else {
            return partialLine(input[index...], maxBytes: Self.maxChunkLineBytes, tooLong: .badRequest)
        }
        if lineEnd - index > Self.maxChunkLineBytes { return .invalid(.badRequest) }
        guard let size = Self.chunkSize(input[index..<lineEnd]) else { return .invalid(.badRequest) }
        if let refusal = countFraming(lineEnd + 2 - index) { return refusal }
        // The data and its CRLF must fit both the body limit and what is left of the wire budget.
        if size > maxBodyBytes - body.count || (size > 0 && size + 2 > maxWireBytes - wireBytes) {
            return .invalid(.contentTooLarge)
        }
        index = lineEnd + 2
        state = size == 0 ? .trailers(bytes: 0) : .chunkData(remaining: size)
        return .advanced
    }

    /// The CRLF after a chunk's data.
    private mutating func readChunkDataEnd(_ input: ArraySlice<UInt8>, at index: inout Int) -> Step {
        let available = input.endIndex - index
        if available >= 1 && input[index] != cr { return .invalid(.badRequest) }
        if available >= 2 && input[index + 1] != lf { return .invalid(.badRequest) }
        guard available >= 2 else { return .needsMore }
        if let refusal = countFraming(2) { return refusal }
        index += 2
        state = .chunkSizeLine
        return .advanced
    }

    /// One line of the trailer section (fields are checked but not kept); an empty line ends the message.
    private mutating func readTrailerLine(
        _ input: ArraySlice<UInt8>,
        at index: inout Int,
        sectionBytes: Int
    ) -> Step {
        guard let lineEnd = RequestParser.findCRLF(input, from: index) else {
            return partialLine(
                input[index...],
                maxBytes: Self.maxTrailerBytes - sectionBytes,
                tooLong: .headerFieldsTooLarge
            )
        }
        let lineBytes = lineEnd + 2 - index
        if sectionBytes + lineBytes - 2 > Self.maxTrailerBytes { return .invalid(.headerFieldsTooLarge) }
        if let refusal = countFraming(lineBytes) { return refusal }
        let line = input[index..<lineEnd]
        index = lineEnd + 2
        if line.isEmpty {
            state = .done
            return .advanced
        }
        // A field like a header's (RFC 9112 §7.1.2): a bare LF or CR inside is refused here as it is in a line
        // still waiting for its CRLF, so the answer never depends on how the bytes were split.
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex,
            line[line.startIndex..<colon].allSatisfy(isTokenByte),
            line[colon...].allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) })
        else { return .invalid(.badRequest) }
        state = .trailers(bytes: sectionBytes + lineBytes)
        return .advanced
    }

    /// A line whose CRLF has not arrived: wait for it, unless it is already too long or ended by a bare LF (whose
    /// CRLF never comes: refused now, not after the body timeout).
    private func partialLine(_ line: ArraySlice<UInt8>, maxBytes: Int, tooLong: HTTPStatus) -> Step {
        if line.contains(lf) { return .invalid(.badRequest) }
        if line.count > maxBytes { return .invalid(tooLong) }
        if wireBytes + line.count > maxWireBytes { return .invalid(.contentTooLarge) }
        return .needsMore
    }

    /// Counts framing bytes against the wire budget; a 413 once the body passes it.
    private mutating func countFraming(_ count: Int) -> Step? {
        wireBytes += count
        return wireBytes > maxWireBytes ? .invalid(.contentTooLarge) : nil
    }

    /// Appends body bytes. A chunked body's buffer grows geometrically but never past the limit; a declared
    /// length gets its whole buffer at the first byte (pages are only touched as bytes arrive). Either way a body
    /// of N bytes holds at most about N bytes (plain appends could double a 257 KiB body's buffer to 512 KiB).
    private mutating func append(_ bytes: ArraySlice<UInt8>, expectedTotal: Int, grow: Bool) {
        guard !bytes.isEmpty else { return }
        wireBytes += bytes.count
        let needed = body.count + bytes.count
        if needed > body.capacity {
            let growth = grow ? max(needed, body.capacity * 2, 4096) : expectedTotal
            body.reserveCapacity(min(max(expectedTotal, needed), growth))
        }
        body.append(contentsOf: bytes)
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

private let cr = UInt8(ascii: "\r")
private let lf = UInt8(ascii: "\n")
