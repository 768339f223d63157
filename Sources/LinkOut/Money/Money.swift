package import Domain
import Foundation

/// An amount of money in minor units (cents) of a currency. Never a floating-point number: prices come from
/// config as decimal text ("29.99") and stay integers from then on.
package struct Money: Sendable, Equatable {
    /// ISO 4217 code, e.g. `EUR`.
    package var currency: CurrencyCode
    /// Amount in the currency's minor unit (cents for EUR and USD, yen for JPY).
    package var minorUnits: Int64

    /// The decimals of the minor unit, from the one table (`CurrencyExponent`).
    package var fractionDigits: Int { CurrencyExponent.of(currency.rawValue) }

    /// The decimals a person reads (ISK in whole krónur): `CurrencyExponent.displayDigits`.
    package var displayDigits: Int { CurrencyExponent.displayDigits(minorUnits, currency: currency.rawValue) }

    /// Parses `"29.99"`, `"30"` or `"30.5"`; nil for signs, exponents, too many decimals or absurd sizes.
    package init?(currency: CurrencyCode, decimal text: String) {
        guard currency.isWellFormed else {
            return nil
        }
        self.currency = currency
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let whole = parts.first, !whole.isEmpty, whole.count <= 12,
            whole.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
        else { return nil }
        let digits = CurrencyExponent.of(currency.rawValue)
        var fraction = parts.count == 2 ? String(parts[1]) : ""
        guard parts.count == 1 || !fraction.isEmpty, fraction.count <= digits,
            fraction.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
        else { return nil }
        fraction += String(repeating: "0", count: digits - fraction.count)
        guard let units = Int64(whole + fraction) else { return nil }
        minorUnits = units
    }

    /// The amount as plain decimal text, e.g. `29.99` (for records and APIs).
    package var decimalText: String { CurrencyExponent.decimalText(minorUnits, currency: currency.rawValue) }
}
