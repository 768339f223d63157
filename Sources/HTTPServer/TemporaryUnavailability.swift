/// An error a handler lets through when the server cannot do the work now but will later without anyone's help (a
/// full disk, a database server that is away): answered 503 with `Retry-After`, never as the server's own fault
/// (500), so clients and providers come back (spec: a 5xx only "when stopping or when the disk is full").
public protocol TemporaryUnavailability: Error {
    /// Seconds a client should wait before trying again; nil when this error is not a temporary one.
    var retryAfterSeconds: Int? { get }
}
