extension TimestampedHMAC {
    /// How a scheme spells its header: `key=value` fields between separators (spaces around keys and values
    /// allowed), one field carrying the timestamp in UNIX seconds, one or more carrying a signature as lowercase
    /// hex. Fields under other keys are ignored, so a provider may add schemes (Stripe's `v0`) without breaking us.
    public struct HeaderFormat: Sendable, Equatable {
        /// The header's name, as failures put it (`Stripe-Signature`).
        public let name: String
        public let separator: Character
        public let timestampKey: String
        public let signatureKey: String

        public init(name: String, separator: Character, timestampKey: String, signatureKey: String) {
            self.name = name
            self.separator = separator
            self.timestampKey = timestampKey
            self.signatureKey = signatureKey
        }
    }
}

extension TimestampedHMAC.HeaderFormat {
    /// The timestamp and the candidate signatures `header` carries; nil when a field is not `key=value` or the
    /// timestamp is repeated or not a number. A missing timestamp or an empty list is for the caller to name.
    func fields(of header: String) -> (timestamp: Int64?, signatures: [[UInt8]])? {
        var timestamp: Int64?
        var signatures: [[UInt8]] = []
        for field in header.split(separator: separator) {
            let pair = field.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pair.count == 2 else { return nil }
            let key = pair[0].trimmingSpaces()
            let value = pair[1].trimmingSpaces()
            if key == timestampKey {
                guard timestamp == nil, let seconds = Int64(value) else { return nil }
                timestamp = seconds
            } else if key == signatureKey {
                // A value that is not 64 lowercase hex digits can never match; it is skipped like an unknown key.
                if let bytes = Hex.decodeLowercase(value), bytes.count == 32 { signatures.append(bytes) }
            }
        }
        return (timestamp, signatures)
    }
}
