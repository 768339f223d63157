import Domain

/// The compact binary form of a visit in the journal: length-prefixed fields, fixed-width integers.
/// A record is `[UInt32 length][UInt64 checksum][payload]`; a torn or damaged tail fails its checksum and
/// ends the replay there (it was never acknowledged).
package enum JournalCoding {
    /// What follows a record's UTM fields: no token, a token as earlier releases wrote it (with the token text as
    /// received, which the ledger never stored: it is read and dropped), or a token without that text.
    enum TokenMark: UInt8 {
        case none = 0
        case withText = 1
        case fields = 2
    }

    static func encode(_ visit: Visit, sequence: Int64) -> [UInt8] {
        // One buffer: the header's length and checksum are written over its first 12 bytes once the record is in.
        var record: [UInt8] = []
        record.reserveCapacity(512)
        put(UInt32(0), &record)
        put(UInt64(0), &record)
        put(sequence, &record)
        put(visit.checkoutId, &record)
        put(visit.bundleId, &record)
        put(visit.landingPath, &record)
        put(visit.at, &record)
        if visit.utm.isEmpty {
            // Most landings carry no UTM values: no lookups (each hashes its name) to write five absent ones.
            record.append(contentsOf: repeatElement(0, count: Visit.utmParameterNames.count))
        } else {
            for name in Visit.utmParameterNames { put(visit.utm[name], &record) }
        }
        if let fields = visit.token {
            let token = fields.token
            record.append(TokenMark.fields.rawValue)
            put(token.externalPurchaseId, &record)
            put(token.appAppleId, &record)
            put(token.bundleId, &record)
            put(token.tokenType, &record)
            put(token.tokenCreationDate, &record)
            record.append(token.tokenExpirationDate == nil ? 0 : 1)
            put(token.tokenExpirationDate ?? 0, &record)
            put(token.environment.rawValue, &record)
            put(fields.source.rawValue, &record)
            put(fields.appAccountToken, &record)
        } else {
            record.append(TokenMark.none.rawValue)
        }
        let header = 12
        let length = UInt32(record.count - header)
        let sum = record.withUnsafeBufferPointer { checksum(UnsafeBufferPointer(rebasing: $0[header...])) }
        record.withUnsafeMutableBytes { bytes in
            bytes.storeBytes(of: length.littleEndian, toByteOffset: 0, as: UInt32.self)
            bytes.storeBytes(of: sum.littleEndian, toByteOffset: 4, as: UInt64.self)
        }
        return record
    }

    /// Every intact record from the start of `bytes`, in order; stops at the first torn or damaged one.
    package static func decodeAll(_ bytes: [UInt8]) -> [JournalRecord] {
        var records: [JournalRecord] = []
        var offset = 0
        while bytes.count - offset >= 12 {
            var reader = Reader(bytes: bytes, offset: offset)
            guard let length = reader.uint32(), let sum = reader.uint64() else { break }
            let start = reader.offset
            guard length <= 1 << 20, bytes.count - start >= Int(length) else { break }
            let payload = Array(bytes[start..<start + Int(length)])
            guard checksum(payload) == sum, let record = decode(payload) else { break }
            records.append(record)
            offset = start + Int(length)
        }
        return records
    }

    private static func decode(_ payload: [UInt8]) -> JournalRecord? {
        var reader = Reader(bytes: payload, offset: 0)
        guard let sequence = reader.int64(), let checkoutId = reader.string(), let bundleId = reader.string(),
            let landingPath = reader.string(), let at = reader.int64()
        else { return nil }
        var utm: [String: String] = [:]
        for name in Visit.utmParameterNames {
            guard let value = reader.optionalString() else { return nil }
            if let value { utm[name] = value }
        }
        guard let mark = reader.byte().flatMap(TokenMark.init(rawValue:)) else { return nil }
        var token: TokenFields?
        if mark != .none {
            guard let id = reader.string(), mark == .fields || reader.string() != nil, let appAppleId = reader.int64(),
                let tokenBundle = reader.string(), let type = reader.optionalString(), let created = reader.int64(),
                let hasExpiry = reader.byte(), let expiry = reader.int64(),
                // The environment stays in the format, though the token's own follows from its id.
                reader.string().flatMap(Environment.init(rawValue:)) != nil,
                let source = reader.string().flatMap(TokenSource.init(rawValue:)), let account = reader.optionalString()
            else { return nil }  // a value this version does not know reads as a torn record, never as a default
            token = TokenFields(
                ExternalPurchaseToken(
                    appAppleId: appAppleId,
                    bundleId: BundleID(tokenBundle),
                    tokenCreationDate: created,
                    externalPurchaseId: ExternalPurchaseID(id),
                    tokenType: type,
                    tokenExpirationDate: hasExpiry == 1 ? expiry : nil
                ),
                source: source,
                appAccountToken: account
            )
        }
        let visit = Visit(
            token: token,
            checkoutId: CheckoutID(checkoutId),
            bundleId: BundleID(bundleId),
            landingPath: landingPath,
            utm: utm,
            at: at
        )
        return (sequence, visit)
    }

    /// FNV-1a, 64 bits: enough to tell a torn or zeroed tail from a record, not meant against tampering.
    package static func checksum(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBufferPointer { checksum($0) }
    }

    static func checksum(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    private static func put<T: FixedWidthInteger>(_ value: T, _ out: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) }
    }

    private static func put(_ text: String, _ out: inout [UInt8]) {
        put(UInt32(text.utf8.count), &out)
        out.append(contentsOf: text.utf8)
    }

    private static func put(_ id: some Identifier, _ out: inout [UInt8]) { put(id.rawValue, &out) }

    private static func put(_ text: String?, _ out: inout [UInt8]) {
        guard let text else {
            out.append(0)
            return
        }
        out.append(1)
        put(text, &out)
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset: Int

        mutating func byte() -> UInt8? {
            guard offset < bytes.count else { return nil }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func integer<T: FixedWidthInteger>(_: T.Type) -> T? {
            let size = MemoryLayout<T>.size
            guard bytes.count - offset >= size else { return nil }
            var value: T = 0
            for index in 0..<size { value |= T(bytes[offset + index]) << (8 * index) }
            offset += size
            return value
        }

        mutating func uint32() -> UInt32? { integer(UInt32.self) }
        mutating func uint64() -> UInt64? { integer(UInt64.self) }
        mutating func int64() -> Int64? { integer(UInt64.self).map { Int64(bitPattern: $0) } }

        mutating func string() -> String? {
            guard let length = uint32(), bytes.count - offset >= Int(length) else { return nil }
            defer { offset += Int(length) }
            return String(decoding: bytes[offset..<offset + Int(length)], as: UTF8.self)
        }

        /// `.some(nil)` for an absent value, `nil` when the bytes run out.
        mutating func optionalString() -> String?? {
            guard let flag = byte() else { return nil }
            if flag == 0 { return .some(nil) }
            guard let text = string() else { return nil }
            return .some(text)
        }
    }
}
