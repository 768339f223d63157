import Foundation

extension HTTPRequest {
    /// Whether the body is declared as `mediaType` (lowercase `type/subtype`): the `Content-Type` up to its
    /// parameters, compared whole and without case (RFC 9110 §8.3.1), so `application/jsonp` or
    /// `application/json-patch+json` is not `application/json`, while `Application/JSON; charset=utf-8` is.
    /// A `charset` parameter other than UTF-8 (or its subset US-ASCII) is not that type as linkout reads it: every
    /// body is read as UTF-8, and a form declared `charset=utf-16` was read as UTF-8 all the same.
    public func declares(_ mediaType: String) -> Bool {
        guard let value = headers["content-type"] else { return false }
        let parts = value.split(separator: ";", omittingEmptySubsequences: false)
        guard (parts.first ?? "").trimmingCharacters(in: .whitespaces).lowercased() == mediaType else { return false }
        return parts.dropFirst().allSatisfy { parameter in
            let pair = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "charset" else {
                return true
            }
            let charset = pair[1].trimmingCharacters(in: CharacterSet.whitespaces.union(["\""])).lowercased()
            return charset == "utf-8" || charset == "utf8" || charset == "us-ascii"
        }
    }
}
