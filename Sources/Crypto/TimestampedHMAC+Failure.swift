extension TimestampedHMAC {
    /// Why a delivery is not believed, worded for the scheme's header ("missing Stripe-Signature header"): callers
    /// pass the description on to logs and to the sender. It names the problem, never the secret or a signature.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public enum Reason: Sendable, Equatable, CaseIterable {
            case missingHeader
            /// A field is not `key=value`, or the timestamp is missing, repeated or not a number.
            case malformedHeader
            /// No field under the signature key holds something that could be a signature.
            case noSignature
            case timestampOutOfTolerance
            case noMatchingSignature
        }

        public let reason: Reason
        public let description: String
    }

    /// The failure for `reason` as this scheme words it; tests compare thrown failures with it.
    public func failure(_ reason: Failure.Reason) -> Failure {
        let header = format.name
        let key = format.signatureKey
        let description =
            switch reason {
            case .missingHeader: "missing \(header) header"
            case .malformedHeader: "malformed \(header) header"
            case .noSignature: "no \(key) signature in \(header)"
            case .timestampOutOfTolerance:
                switch tolerance {
                case .past: "\(header) timestamp is older than the tolerance"
                case .eitherWay: "\(header) timestamp is outside the tolerance"
                }
            case .noMatchingSignature: "no \(key) signature matches the body"
            }
        return Failure(reason: reason, description: description)
    }
}
