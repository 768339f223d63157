import Crypto
import Domain

/// The `requestIdentifier` of a new report, derived from what it says (the token, the status, the line items
/// it carries) under the installation's secret: the same content always gets the same identifier. A ledger
/// restored from an older backup plans again the reports it lost, and they come out under the identifiers they
/// had, so Apple's copy is found (Retrieve External Purchase Report) instead of a second report being sent.
struct ReportIdentifiers: Sendable {
    private let mac: HMACSHA256

    init(secret: String) {
        mac = HMACSHA256(key: Array(("report-identifiers\u{0}" + secret).utf8))
    }

    /// A UUID (Apple's requestIdentifier is one) in the version-4 layout, lower case.
    func identifier(externalPurchaseId: ExternalPurchaseID, status: ReportStatus, lineItemBodies: [String]) -> String {
        // Sorted: the same line items give the same identifier whatever order they were stored in.
        let message = ([externalPurchaseId.rawValue, status.rawValue] + lineItemBodies.sorted()).joined(
            separator: "\u{0}"
        )
        var bytes = Array(mac.authenticate(message).prefix(16))
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = Array(Hex.encode(bytes))
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(hex[$0]) }.joined(separator: "-")
    }
}
