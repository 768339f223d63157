// libFuzzer target `journal`: the visit journal reader on whatever a crash, a full disk or a damaged disk left
// in a segment. Each input is read twice: as it is (checksums mostly fail, which tests the framing), and with
// every record's checksum made right, so mutated payloads reach the field decoder too.
import Storage

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = JournalCoding.decodeAll(bytes)
    _ = JournalCoding.decodeAll(resealed(bytes))
    return 0
}

/// `bytes` with the checksum of each `[UInt32 length][UInt64 checksum][payload]` record replaced by the right one.
func resealed(_ bytes: [UInt8]) -> [UInt8] {
    var sealed = bytes
    var offset = 0
    while sealed.count - offset >= 12 {
        var length = 0
        for index in 0..<4 { length |= Int(sealed[offset + index]) << (8 * index) }
        let start = offset + 12
        guard sealed.count - start >= length else { break }
        let sum = JournalCoding.checksum(Array(sealed[start..<start + length]))
        for index in 0..<8 { sealed[offset + 4 + index] = UInt8(truncatingIfNeeded: sum >> (8 * UInt64(index))) }
        offset = start + length
    }
    return sealed
}
