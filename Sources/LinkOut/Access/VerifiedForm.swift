import Domain
import HTTPServer

/// A posted form whose `csrf` field is the token of this browser's session for the page it was shown on (a
/// checkout, a demo payment): proof that the post comes from that page in that browser.
struct VerifiedForm {
    /// The browser session that posted it.
    let session: String
    private let fields: [(name: String, value: String)]

    func field(_ name: String) -> String? { fields.first { $0.name == name }?.value }

    /// The form in `request` (at most `maxBytes` of it are read), or nil when its CSRF token does not match.
    static func read(
        _ request: HTTPRequest,
        identifiers: Identifiers,
        secure: Bool,
        scope: String,
        maxBytes: Int
    ) -> VerifiedForm? {
        let fields = FormDecoding.items(Substring(String(decoding: request.body.prefix(maxBytes), as: UTF8.self)))
        guard let session = Session.id(in: request, identifiers: identifiers, secure: secure),
            let csrf = fields.first(where: { $0.name == "csrf" })?.value,
            identifiers.isValidCSRF(csrf, session: session, scope: scope)
        else { return nil }
        return VerifiedForm(session: session, fields: fields)
    }
}
