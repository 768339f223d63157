extension TimestampedHMAC {
    /// How far a signed timestamp may be from now, in seconds.
    public enum Tolerance: Sendable, Equatable {
        /// Only a timestamp older than this is refused; one in the future passes (Stripe's SDKs do the same).
        case past(seconds: Int64)
        /// A timestamp this far from now either way is refused (Paddle's SDKs do the same).
        case eitherWay(seconds: Int64)

        func admits(_ timestamp: Int64, nowSeconds: Int64) -> Bool {
            // A timestamp so far off that the difference overflows is outside any window (Int64.min, sent in a
            // header, once stopped the server).
            let (age, overflow) = nowSeconds.subtractingReportingOverflow(timestamp)
            guard !overflow else { return false }
            switch self {
            case .past(let seconds): return age <= seconds
            case .eitherWay(let seconds): return age.magnitude <= seconds.magnitude
            }
        }
    }
}
