import Domain

/// The operator's exchange rates, by pricing currency, for sales Apple does not take in their own currency. Apple wants
/// "the Bloomberg exchange rate from within 48 hours of the transaction date" (Apple: "exchangeRate"), so a rate is
/// dated: the rate for a transaction is the one of its UTC day or the closest day before it, at most two days (48
/// hours) apart, else the closest day after it within two days. With no dated rate that close the line item is not
/// reported (`Lookup.missing`): it waits for the operator to add one. An undated rate (the older configuration form) is
/// taken for every date: the operator then answers for keeping it current.
public struct ExchangeRateTable: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        /// `EUR` or `USD`.
        public var reportingCurrency: String
        /// The older form's single rate, decimal text.
        public var undated: String?
        /// Start of a UTC day (UNIX ms) → the rate for that day, decimal text.
        public var dated: [Int64: String]

        public init(reportingCurrency: String, undated: String? = nil, dated: [Int64: String] = [:]) {
            self.reportingCurrency = reportingCurrency.uppercased()
            self.undated = undated
            self.dated = dated
        }
    }

    public enum Lookup: Sendable, Equatable {
        case rate(ExchangeRate)
        /// Why no rate can be used for this transaction, for the log, the dashboard and the admin API.
        case missing(String)
    }

    /// Pricing currency (upper case) → its rates.
    public var entries: [String: Entry]

    public init(entries: [String: Entry] = [:]) {
        self.entries = entries
    }

    static let day: Int64 = Milliseconds.day
    /// Apple's "within 48 hours of the transaction date", in whole days.
    static let reach: Int64 = 2 * day

    public func rate(for currency: String, at transaction: Int64) -> Lookup {
        let code = currency.uppercased()
        guard let entry = entries[code] else {
            return .missing("no \(code) rate in payments.exchangeRates or payments.exchangeRatesFile")
        }
        if let undated = entry.undated {
            return .rate(ExchangeRate(reportingCurrency: entry.reportingCurrency, rate: undated))
        }
        let today = Self.dayStart(of: transaction)
        let before = entry.dated.keys.filter { $0 <= today && today - $0 <= Self.reach }.max()
        let after = entry.dated.keys.filter { $0 > today && $0 - today <= Self.reach }.min()
        if let day = before ?? after, let text = entry.dated[day] {
            return .rate(ExchangeRate(reportingCurrency: entry.reportingCurrency, rate: text))
        }
        let newest = entry.dated.keys.filter { $0 <= today }.max()
        let known = newest.map { "the newest before it is for \(Self.dayText($0))" } ?? "none is dated before it"
        return .missing(
            "no \(code) rate within 48 hours of the transaction on \(Self.dayText(today)) (\(known)): Apple wants "
                + "the rate of the transaction's date; add it to payments.exchangeRates or payments.exchangeRatesFile"
        )
    }

    /// This table with `other`'s currencies in place of its own (a rates file over the configuration).
    public func overlaid(by other: ExchangeRateTable) -> ExchangeRateTable {
        ExchangeRateTable(entries: entries.merging(other.entries) { _, newer in newer })
    }

    /// The start of the UTC day of `milliseconds`.
    public static func dayStart(of milliseconds: Int64) -> Int64 {
        let days = milliseconds >= 0 ? milliseconds / day : (milliseconds - day + 1) / day
        return days * day
    }

    /// `YYYY-MM-DD` (a proleptic Gregorian date, UTC) → the start of that day in UNIX ms; nil when it is not one.
    public static func day(_ text: String) -> Int64? {
        UTCDate.parseDay(text).map { $0 * day }
    }

    /// The start of a UTC day as `YYYY-MM-DD`.
    public static func dayText(_ milliseconds: Int64) -> String {
        UTCDate.text(days: dayStart(of: milliseconds) / day)
    }
}
