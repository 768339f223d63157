import Domain
import Foundation
package import Storage

/// The CSV form of the token ledger (RFC 4180 quoting), shared by the CLI export and the admin API.
package enum LedgerCSV {
    static let header = [
        "externalPurchaseId", "environment", "source", "bundleId", "appAppleId", "tokenType", "tokenCreationDate",
        "tokenExpirationDate", "firstSeenAt", "lastSeenAt", "visitCount",
    ]

    package static func render(_ rows: [StoredToken]) -> String {
        var lines = [header.joined(separator: ",")]
        for row in rows {
            let token = row.token
            let fields: [String] = [
                token.externalPurchaseId.rawValue, token.environment.rawValue, row.source.rawValue,
                token.bundleId.rawValue,
                String(token.appAppleId),
                token.tokenType ?? "", String(token.tokenCreationDate),
                token.tokenExpirationDate.map(String.init) ?? "",
                String(row.firstSeenAt), String(row.lastSeenAt), String(row.visitCount),
            ]
            lines.append(fields.map(quote).joined(separator: ","))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// Quotes when needed, and defuses leading `=+-@` so a spreadsheet never runs a field as a formula.
    static func quote(_ field: String) -> String {
        var value = field
        if let first = value.first, "=+-@".contains(first), Int64(value) == nil { value = "'" + value }
        guard value.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return value }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
