/// A head still incomplete that can never become a request is refused at once, not after the read timeout: a
/// line ended by a bare LF (linkout takes CRLF only, which RFC 9112 §2.2 allows a recipient to require), a bare
/// CR (RFC 9112 §2.2: the element is invalid; a field with one is refused once complete), or a request line whose
/// method has a byte no method has (a TLS handshake sent to the plain port, binary noise).
extension RequestParser {
    /// `pending`: the bytes from the start of the request line, no CRLF among them yet.
    static func requestLineCannotComplete(_ pending: ArraySlice<UInt8>) -> Bool {
        // With no CRLF among them, any LF is bare, and a CR other than the last byte is followed by something else.
        if pending.contains(lineFeed) { return true }
        if let carriage = pending.firstIndex(of: carriageReturn), carriage != pending.endIndex - 1 { return true }
        let method = pending.prefix { $0 != space && $0 != carriageReturn }
        // Nothing may come before the method but an empty line's CR (its LF still on the way).
        return !method.allSatisfy(isTokenByte) || (method.isEmpty && pending.first == space)
    }

    /// `pending`: header fields' bytes after `previous`, the byte before them (the request line's LF when they are
    /// all of the fields so far: an LF first then ends an empty line with no CR of its own). A CR last may be
    /// followed by its LF yet.
    static func fieldsCannotComplete(_ pending: ArraySlice<UInt8>, after previous: UInt8 = lineFeed) -> Bool {
        var previous = previous
        for byte in pending {
            if byte == lineFeed ? previous != carriageReturn : previous == carriageReturn { return true }
            previous = byte
        }
        return false
    }
}

private let carriageReturn = UInt8(ascii: "\r")
private let lineFeed = UInt8(ascii: "\n")
private let space = UInt8(ascii: " ")
