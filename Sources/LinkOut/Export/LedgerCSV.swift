import Domain
import Foundation
package import Storage

/// The CSV form of the token ledger (RFC 4180 quoting), shared by the CLI export and the admin API.
package enum LedgerCSV {
    static let header = [
        "externalPurchaseId", "environment", "source", "bundleId", "appAppleId", "tokenType", "tokenCreationDate",
        "tokenExpirationDate", "firstSeenAt", "lastSeenAt", "visitCount",
    ]

    package static var headerLine: String { header.joined(separator: ",") + "\r\n" }

    /// Tokens in first-seen order after `after`, at most `limit`, page by page (keyset), as CSV rows handed to
    /// `write` a page at a time, so millions of rows never sit in memory at once. Returns where the next rows
    /// start when `limit` stopped it with more left.
    package static func export(
        _ ledger: Ledger,
        after: TokenCursor? = nil,
        limit: Int = Int.max,
        pageSize: Int = 5_000,
        write: (String) -> Void
    ) throws(StorageError) -> TokenCursor? {
        var cursor = after
        var left = limit
        while left > 0 {
            let wanted = min(pageSize, left)
            let page = try ledger.tokens.tokens(limit: wanted, after: cursor)
            guard let last = page.last else { return nil }
            write(renderRows(page))
            cursor = TokenCursor(after: last)
            left -= page.count
            if page.count < wanted { return nil }  // the ledger ended
        }
        // The limit is reached: more follow only if a row is left after the cursor.
        return try ledger.tokens.tokens(limit: 1, after: cursor).isEmpty ? nil : cursor
    }

    private static func renderRows(_ rows: [StoredToken]) -> String {
        var lines: [String] = []
        lines.reserveCapacity(rows.count)
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
            lines.append(fields.map(quote).joined(separator: ",") + "\r\n")
        }
        return lines.joined()
    }

    /// Quotes when needed, and defuses a leading `=+-@`, tab or carriage return (OWASP's list) so a spreadsheet
    /// never runs a field as a formula. A control character other than a line break or a tab, or a Unicode one
    /// that reorders text, is written as an escape (`\u{1b}`): `linkout export --format csv` to a terminal ran
    /// the escape sequences a provider's product id carried.
    static func quote(_ field: String) -> String {
        var value = TerminalText.visible(field, keeping: ["\n", "\r", "\t"])
        // By scalars: Swift reads `\r\n` as one character, equal to neither, and such a field went out unquoted.
        if let first = value.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first), Int64(value) == nil {
            value = "'" + value
        }
        guard value.unicodeScalars.contains(where: { ",\"\n\r".unicodeScalars.contains($0) }) else { return value }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
