import Foundation

extension HTTPRequest {
    /// Whether the body is declared as `mediaType` (lowercase `type/subtype`): the `Content-Type` up to its
    /// parameters, compared whole and without case (RFC 9110 §8.3.1), so `application/jsonp` or
    /// `application/json-patch+json` is not `application/json`, while `Application/JSON; charset=utf-8` is.
    public func declares(_ mediaType: String) -> Bool {
        guard let value = headers["content-type"] else { return false }
        let type = value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return type.trimmingCharacters(in: .whitespaces).lowercased() == mediaType
    }
}
