public import HTTPServer
public import Storage

/// A write the disk or the database server cannot take right now is a 503 with `Retry-After` wherever it happens
/// (the token API, a login's session, a webhook), as a landing's is: space freed, or the server back, and the same
/// request goes through.
extension StorageError: TemporaryUnavailability {
    public var retryAfterSeconds: Int? {
        switch code {
        // As a landing's: a full disk does not clear within a second.
        case .diskFull: 30
        case .unavailable: 5
        default: nil
        }
    }
}
