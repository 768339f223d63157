/// When a Stripe call is tried again, following Stripe's own SDKs (stripe-python's and stripe-node's HTTP clients): at
/// most `maxRetries` more attempts; `Stripe-Should-Retry` decides first when Stripe sends it; otherwise network errors,
/// timeouts, 409 (a conflicting request, e.g. the same key in flight) and 5xx are retried, and 429 and every other 4xx
/// are not. Retries reuse the same `Idempotency-Key`, so a retried POST can never create a second session.
public struct StripeRetryPolicy: Sendable, Equatable {
    public enum Decision: Sendable, Equatable {
        case succeed
        case retry
        case fail(PaymentError.Kind)
    }

    /// Retries after the first attempt. Stripe's SDKs default to 2.
    public var maxRetries: Int
    /// The first delay; it doubles for each further retry, capped at `maximumDelay`, and half of it is jitter.
    public var baseDelay: Duration
    public var maximumDelay: Duration

    public init(maxRetries: Int = 2, baseDelay: Duration = .milliseconds(500), maximumDelay: Duration = .seconds(2)) {
        self.maxRetries = maxRetries
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
    }

    /// What to do with an HTTP answer. `shouldRetry` is the `Stripe-Should-Retry` header, if any.
    public static func decide(status: Int, shouldRetry: String?) -> Decision {
        if (200..<300).contains(status) { return .succeed }
        let kind: PaymentError.Kind = status == 429 || status == 409 || status >= 500 ? .unavailable : .rejected
        switch shouldRetry?.lowercased() {
        case "true": return .retry
        case "false": return .fail(kind)
        default: return status == 409 || status >= 500 ? .retry : .fail(kind)
        }
    }

    /// The pause before retry number `retry` (1-based): min(base·2^(retry−1), maximum), scaled by a random factor in
    /// [0.5, 1] so many clients do not retry in step (as Stripe's Python and Node SDKs do).
    public func delay(beforeRetry retry: Int, random: Double = Double.random(in: 0.5...1)) -> Duration {
        let doubled = baseDelay * (1 << min(max(retry - 1, 0), 16))
        let capped = min(doubled, maximumDelay)
        return capped * min(max(random, 0.5), 1)
    }
}
