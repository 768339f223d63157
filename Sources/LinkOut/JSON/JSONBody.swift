import ExternalPurchase
import HTTPServer

/// Checks the JSON APIs make of a request body beyond what JSONDecoder checks.
enum JSONBody {
    /// A 400 for a body JSONDecoder takes but that is not plain JSON, else nil. Text not in UTF-8
    /// (`TokenDecoder.utf8JSONText`; a leading byte order mark is read past): the checks below read UTF-8. Text
    /// outside RFC 8259's grammar that Foundation's reader takes (`{"code": "…",}`, a raw tab in a string,
    /// `"\x41"`; `JSONGrammar`), which others refuse: answered with `notJSON`, the route's code for a body that is
    /// not JSON. A key that occurs twice in any object: JSONDecoder silently
    /// keeps one of the two values, and which one differs between readers (a proxy, a log, this server), so
    /// `{"token": a, "token": b}` could mean one thing to whoever checked it and another here. `fields` are the
    /// body's own keys: only those are named in the message, so it never repeats arbitrary text from the request.
    static func laxnessRefusal(_ body: [UInt8], fields: Set<String>, notJSON: String) -> HTTPResponse? {
        laxness(body, fields: fields, notJSON: notJSON).map { JSONResponse.error(.badRequest, $0.code, $0.message) }
    }

    /// The same, as the refusal's code (`notJSON` or `duplicate_key`) and message, for a route that also counts it.
    static func laxness(_ body: [UInt8], fields: Set<String>, notJSON: String) -> (code: String, message: String)? {
        guard let text = TokenDecoder.utf8JSONText(body).map(Array.init) else {
            return (notJSON, "The body is not JSON text in UTF-8 (RFC 8259 §8.1: no UTF-16 or UTF-32, no NUL byte).")
        }
        guard JSONGrammar.accepts(text) else {
            return (
                notJSON,
                "The body is not JSON (RFC 8259): \(JSONGrammar.laxnesses), or nesting past \(JSONGrammar.maxDepth) "
                    + "levels."
            )
        }
        guard let key = TokenDecoder.duplicateKeyAnywhere(in: text) else { return nil }
        let what = fields.contains(key) ? "\"\(key)\"" : "a key"
        return ("duplicate_key", "The body names \(what) more than once.")
    }
}
