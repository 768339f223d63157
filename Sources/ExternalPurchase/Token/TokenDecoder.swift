public import Domain
import Foundation

/// Turns the text of an `externalPurchaseToken` into its JSON fields (Apple: "a string that is Base64URL-encoded
/// JSON"), accepting every shape it arrives in: either Base64 alphabet, with or without padding, `%3D` for `=`,
/// surrounding whitespace, and spaces that form-decoding made out of `+`.
public enum TokenDecoder {
    /// Longest token text accepted. Apple's examples are 204-272 characters; 4 KB leaves room for new fields.
    public static let maxLength = 4096

    public static func decode(_ text: String) -> Result<ExternalPurchaseToken, TokenRejection> {
        let raw = text.utf8
        if raw.count > maxLength { return .failure(TokenRejection(.tooLong(limit: maxLength))) }
        let normalized = normalize(raw)
        if normalized.isEmpty { return .failure(TokenRejection(.empty)) }
        guard let json = Base64URL.decode(normalized) else { return .failure(TokenRejection(.notBase64)) }
        if let token = decodePlain(json) {
            if let problem = checkFields(token) { return .failure(problem) }
            return .success(token)
        }
        guard let text = utf8JSONText(json).map(Array.init), JSONGrammar.accepts(text) else {
            return .failure(TokenRejection(.notJSON))
        }
        let token: ExternalPurchaseToken
        do {
            token = try JSONDecoder().decode(ExternalPurchaseToken.self, from: Data(text))
        } catch let error as DecodingError {
            return .failure(rejection(for: error))
        } catch {
            return .failure(TokenRejection(.notJSON))
        }
        if let key = duplicateTopLevelKey(in: text) {
            let known =
                ["appAppleId", "bundleId", "tokenCreationDate", "externalPurchaseId", "tokenType"]
                + ["tokenExpirationDate"]
            return .failure(TokenRejection(.duplicateField(known.contains(key) ? key : nil)))
        }
        if let problem = checkFields(token) { return .failure(problem) }
        return .success(token)
    }

    /// Trims whitespace, turns inner spaces back into `+`, and unescapes a percent-encoded `=`, `+` or `/`.
    static func normalize(_ raw: String.UTF8View) -> [UInt8] {
        let bytes = Array(raw)
        // A token as StoreKit sends it needs none of this: no byte to trim, turn back or unescape.
        if bytes.allSatisfy({ $0 > 0x20 && $0 != UInt8(ascii: "%") }) { return bytes }
        var start = 0
        var end = bytes.count
        while start < end, isWhitespace(bytes[start]) { start += 1 }
        while end > start, isWhitespace(bytes[end - 1]) { end -= 1 }
        var output: [UInt8] = []
        output.reserveCapacity(end - start)
        var index = start
        while index < end {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), index + 2 < end,
                bytes[index + 1] == UInt8(ascii: "3") || bytes[index + 1] == UInt8(ascii: "2")
            {
                switch (bytes[index + 1], bytes[index + 2] | 0x20) {
                case (UInt8(ascii: "3"), UInt8(ascii: "d")): output.append(UInt8(ascii: "="))
                case (UInt8(ascii: "2"), UInt8(ascii: "b")): output.append(UInt8(ascii: "+"))
                case (UInt8(ascii: "2"), UInt8(ascii: "f")): output.append(UInt8(ascii: "/"))
                default:
                    output.append(byte)
                    index += 1
                    continue
                }
                index += 3
                continue
            }
            output.append(byte == UInt8(ascii: " ") ? UInt8(ascii: "+") : byte)
            index += 1
        }
        return output
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private static func rejection(for error: DecodingError) -> TokenRejection {
        switch error {
        case .keyNotFound(let key, _):
            return TokenRejection(.missingField(key.stringValue))
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            guard let field = context.codingPath.first?.stringValue else { return TokenRejection(.notJSON) }
            return TokenRejection(.invalidField(field))
        case .dataCorrupted(let context):
            guard let field = context.codingPath.first?.stringValue else { return TokenRejection(.notJSON) }
            return TokenRejection(.invalidField(field))
        @unknown default:
            return TokenRejection(.notJSON)
        }
    }

    /// Whether `id` has the shape of the ids Apple issues: a UUID, `SANDBOX_` and a UUID, or more generally
    /// letters, digits, `-` and `_`, 1 to 128 of them. The id names rows, files of exports and paths of the
    /// APIs (`/v1/tokens/{id}/…`), so slashes, dots, quotes and angle brackets never get in.
    public static func isExternalPurchaseId(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 128 && id.utf8.allSatisfy(ASCIIBytes.isIdentifier)
    }

    /// A bundle ID as a token may carry it: visible ASCII, 1 to 255 bytes.
    public static func isBundleId(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 255 && id.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }

    /// Shape checks the JSON types alone do not give.
    private static func checkFields(_ token: ExternalPurchaseToken) -> TokenRejection? {
        guard isExternalPurchaseId(token.externalPurchaseId.rawValue) else {
            return TokenRejection(.invalidExternalPurchaseId)
        }
        guard isBundleId(token.bundleId.rawValue) else { return TokenRejection(.invalidField("bundleId")) }
        guard token.appAppleId > 0 else { return TokenRejection(.invalidField("appAppleId")) }
        guard token.tokenCreationDate > 0 else { return TokenRejection(.invalidField("tokenCreationDate")) }
        if let expiry = token.tokenExpirationDate, expiry < token.tokenCreationDate {
            return TokenRejection(.invalidField("tokenExpirationDate"))
        }
        if let type = token.tokenType,
            type.isEmpty || type.utf8.count > 64 || !type.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        {
            return TokenRejection(.invalidField("tokenType"))
        }
        return nil
    }
}
