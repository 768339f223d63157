/// How linkout talks to Paddle Billing (Paddle: "Authentication", "Versioning"): the API key, which also says live or
/// sandbox, the API host, the hosted checkout to send people to, and the seller's catalog prices.
public struct PaddleConfiguration: Sendable, CustomStringConvertible {
    /// `pdl_live_apikey_…` or `pdl_sdbx_apikey_…` (legacy keys: 50 characters). Sent only in the `Authorization`
    /// header; never printed (see `description`).
    public var apiKey: String
    /// Paddle's API; a local fake in tests. Defaults to the live or sandbox host by the key.
    public var apiBase: String
    /// The hosted checkout's launch URL (Paddle dashboard, Checkout > Hosted checkouts); the person goes there with
    /// `transaction_id=txn_…` (Paddle: "Hosted checkouts").
    public var checkoutURL: String
    /// Paddle catalog prices by linkout product id (`pri_…`). A product without one is sold at linkout's own
    /// price as a non-catalog price.
    public var priceIds: [String: String]
    /// Time allowed for one call, connection included: the person is looking at a spinner.
    public var attemptTimeout: Duration = .seconds(8)
    public var connectTimeout: Duration = .seconds(3)
    /// CA file to trust instead of the system store, and an outbound proxy, as for Apple's API.
    public var caFile: String?
    public var proxy: String?

    public static let liveAPIBase = "https://api.paddle.com"
    public static let sandboxAPIBase = "https://sandbox-api.paddle.com"

    public init(apiKey: String, apiBase: String? = nil, checkoutURL: String, priceIds: [String: String] = [:]) {
        self.apiKey = apiKey
        self.apiBase = apiBase ?? Self.defaultAPIBase(forKey: apiKey)
        self.checkoutURL = checkoutURL
        self.priceIds = priceIds
    }

    /// Sandbox keys contain `_sdbx` (Paddle: "Authentication") and work only on the sandbox host.
    public static func isSandboxKey(_ key: String) -> Bool { key.contains("_sdbx") }

    /// A key that takes real money: a live key (`pdl_live_`), or a legacy key, which cannot be told apart and is
    /// taken as live (a sandbox legacy key on the live host fails at the first call).
    public var takesRealMoney: Bool { !Self.isSandboxKey(apiKey) }

    public static func defaultAPIBase(forKey key: String) -> String {
        isSandboxKey(key) ? sandboxAPIBase : liveAPIBase
    }

    public var description: String {
        "PaddleConfiguration(apiBase: \(apiBase), checkoutURL: \(checkoutURL), key: [redacted])"
    }
}
