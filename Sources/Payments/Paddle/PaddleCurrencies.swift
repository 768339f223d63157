import Domain

/// The currencies Paddle Billing sells in (its SDKs' `CurrencyCode`). A price in another could never be paid: the
/// transaction Paddle is asked for fails, and the person gets a retry page for good.
enum PaddleCurrencies {
    static let sold: Set<String> = [
        "USD", "EUR", "GBP", "JPY", "AUD", "CAD", "CHF", "HKD", "SGD", "SEK", "ARS", "BRL", "CNY", "COP", "CZK", "DKK",
        "HUF", "ILS", "INR", "KRW", "MXN", "NOK", "NZD", "PLN", "RUB", "THB", "TRY", "TWD", "UAH", "VND", "ZAR",
    ]

    static func sells(_ currency: CurrencyCode) -> Bool {
        sold.contains(currency.rawValue.uppercased())
    }
}
