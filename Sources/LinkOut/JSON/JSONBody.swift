import ExternalPurchase
import HTTPServer

/// Checks the JSON APIs make of a request body beyond what JSONDecoder checks.
enum JSONBody {
    /// A 400 when a key occurs twice in any object of `body`, else nil. JSONDecoder silently keeps one of the two
    /// values, and which one differs between readers (a proxy, a log, this server), so `{"token": a, "token": b}`
    /// could mean one thing to whoever checked it and another here. `fields` are the body's own keys: only those
    /// are named in the message, so it never repeats arbitrary text from the request.
    static func duplicateKeyRefusal(_ body: [UInt8], fields: Set<String>) -> HTTPResponse? {
        guard let key = TokenDecoder.duplicateKeyAnywhere(in: body) else { return nil }
        let what = fields.contains(key) ? "\"\(key)\"" : "a key"
        return JSONResponse.error(.badRequest, "duplicate_key", "The body names \(what) more than once.")
    }
}
