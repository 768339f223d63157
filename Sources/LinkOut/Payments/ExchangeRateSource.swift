import Domain
import Foundation
import Logging
import Payments
import Synchronization

/// The exchange rates in force: the configuration's `payments.exchangeRates`, overlaid by the file
/// `payments.exchangeRatesFile` when there is one. The operator updates that file while linkout runs (a daily
/// rate feed); it is read again whenever its modification time or size changes, so a new rate releases the line
/// items held for it without a restart. A file that no longer parses leaves the last good rates in force and is
/// logged, naming the field.
final class ExchangeRateSource: Sendable {
    private struct Cache {
        var stamp: (modified: Date?, size: Int)?
        var table = ExchangeRateTable()
    }

    private let configured: ExchangeRateTable
    private let file: String?
    private let logger: Logger
    private let cache = Mutex(Cache())

    init(configured: ExchangeRateTable, file: String?, logger: Logger) {
        self.configured = configured
        self.file = file
        self.logger = logger
    }

    /// The rate for a sale in `currency` at `transaction` (UNIX ms), or why there is none (Apple's "exchangeRate":
    /// within 48 hours).
    func rate(for currency: CurrencyCode, at transaction: Int64) -> ExchangeRateTable.Lookup {
        current().rate(for: currency.rawValue, at: transaction)
    }

    /// The rates now, reading the file again if it changed since the last look.
    func current() -> ExchangeRateTable {
        guard let file else { return configured }
        let attributes = try? FileManager.default.attributesOfItem(atPath: file)
        let stamp = (
            modified: attributes?[.modificationDate] as? Date,
            size: (attributes?[.size] as? NSNumber)?.intValue ?? -1
        )
        return cache.withLock { cache in
            if let known = cache.stamp, known.modified == stamp.modified, known.size == stamp.size {
                return configured.overlaid(by: cache.table)
            }
            cache.stamp = stamp
            do throws(ConfigurationError) {
                cache.table = try Configuration.Payments.ratesFile(file)
                logger.notice("exchange rates read", ["file": file, "currencies": "\(cache.table.entries.count)"])
            } catch {
                logger.error(
                    "exchange rates file not used; the last good rates stay in force",
                    ["field": error.field, "problem": error.problem]
                )
            }
            return configured.overlaid(by: cache.table)
        }
    }
}
