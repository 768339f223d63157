import Outbound

extension HTTPClient {
    /// The libcurl client a provider calls its API with: each attempt bounded by `attemptTimeout` (the provider
    /// retries, if at all, on its own), its CA file and proxy when the operator set them, its answers taken up to
    /// `maxAnswerBytes`.
    static func forProvider(connectTimeout: Duration, attemptTimeout: Duration, caFile: String?, proxy: String?)
        -> HTTPClient
    {
        var configuration = HTTPClient.Configuration()
        configuration.connectTimeout = connectTimeout
        configuration.totalTimeout = attemptTimeout
        configuration.caFile = caFile
        configuration.proxy = proxy
        configuration.maxResponseBytes = providerAnswerBytes
        return HTTPClient(configuration: configuration)
    }

    /// The objects linkout asks a provider for (a checkout session, a transaction, a customer's address) are a few
    /// KB: the 8 MiB any client takes, for each of many checkouts waiting on a provider gone wrong at once, left the
    /// server holding hundreds of MB.
    static let providerAnswerBytes = 1 << 20
}
