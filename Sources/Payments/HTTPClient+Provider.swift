import Outbound

extension HTTPClient {
    /// The libcurl client a provider calls its API with: each attempt bounded by `attemptTimeout` (the provider
    /// retries, if at all, on its own), its CA file and proxy when the operator set them.
    static func forProvider(connectTimeout: Duration, attemptTimeout: Duration, caFile: String?, proxy: String?)
        -> HTTPClient
    {
        var configuration = HTTPClient.Configuration()
        configuration.connectTimeout = connectTimeout
        configuration.totalTimeout = attemptTimeout
        configuration.caFile = caFile
        configuration.proxy = proxy
        return HTTPClient(configuration: configuration)
    }
}
