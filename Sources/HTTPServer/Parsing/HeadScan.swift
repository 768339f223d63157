/// What earlier looks at an incomplete request head found, so that a head arriving a byte at a time is not parsed
/// whole again for every byte: re-parsing 16 KB of fields byte by byte took a sixth of a second of a loop's time
/// (on top of the reads themselves), and a client may send a head that way. Offsets count from the head's first
/// byte.
package struct HeadScan: Sendable, Equatable {
    /// Bytes judged incomplete so far.
    var judged = 0
    /// Where the request line's CRLF is, once it arrived.
    var lineEnd: Int?
    /// The request line so far is a method with nothing after it yet (and at least one byte of it).
    var inMethod = false
    /// The request line so far has a method and something after it.
    var pastMethod = false

    package init() {}
}

extension RequestParser {
    /// `parseHead`, told what earlier looks at the same, shorter, head found. Only a CR or LF among the new bytes
    /// (or a CR just before them), a byte of the method, or a length past a limit can make an incomplete head
    /// anything else: without any of them the answer is incomplete again at the cost of reading the new bytes once.
    package func parseHead(_ bytes: ArraySlice<UInt8>, scan: inout HeadScan) -> HeadResult {
        if scan.judged > 0, scan.judged <= bytes.count, stillIncomplete(bytes, scan: scan) {
            scan.judged = bytes.count
            return .incomplete
        }
        // Once the request line is in, only the new bytes are searched and judged: a head of many short fields
        // sent a byte at a time is read once, not once per line.
        let resumption = scan.lineEnd.flatMap { lineEnd in
            scan.judged <= bytes.count ? Resumption(lineEnd: lineEnd, judged: scan.judged) : nil
        }
        let result = parseHead(bytes, resuming: resumption)
        guard case .incomplete = result else { return result }
        scan.judged = bytes.count
        if scan.lineEnd == nil {
            let start = Self.requestLineStart(bytes)
            scan.lineEnd = Self.findCRLF(bytes, from: start).map { $0 - bytes.startIndex }
            let line = bytes[start...]
            let method = line.prefix { $0 != space && $0 != cr && $0 != lf }
            scan.inMethod = !method.isEmpty && method.count == line.count
            scan.pastMethod = !method.isEmpty && method.count < line.count
        }
        return result
    }

    private func stillIncomplete(_ bytes: ArraySlice<UInt8>, scan: HeadScan) -> Bool {
        let newBytes = bytes[(bytes.startIndex + scan.judged)...]
        // A CRLF (or a bare CR or LF, which is refused) can only be made with a CR or LF.
        if bytes[bytes.startIndex + scan.judged - 1] == cr || newBytes.contains(where: { $0 == cr || $0 == lf }) {
            return false
        }
        // Nothing of the request line yet but empty lines: its first byte is judged whole.
        guard scan.inMethod || scan.pastMethod else { return false }
        if scan.inMethod && !newBytes.prefix(while: { $0 != space }).allSatisfy(isTokenByte) { return false }
        // Past a limit the full parse refuses the head (once; the empty lines it may skip first only make it later).
        if let lineEnd = scan.lineEnd { return bytes.count - lineEnd <= maxBytesAfterLineWhileIncomplete }
        return bytes.count <= limits.maxRequestLineBytes
    }
}

private let cr = UInt8(ascii: "\r")
private let lf = UInt8(ascii: "\n")
private let space = UInt8(ascii: " ")
