public import Foundation

/// The one encoding of what linkout stores for Apple and sends to it (reports, line items, tokens): sorted keys,
/// slashes as they are. A retry must send the same bytes under the same `requestIdentifier` (Apple:
/// "requestIdentifier"), so every writer of a stored report or line item goes through here rather than setting up an
/// encoder of its own.
public enum AppleJSON {
    public static func text(_ value: some Encodable) throws -> String {
        String(decoding: try bytes(value), as: UTF8.self)
    }

    public static func bytes(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }
}
