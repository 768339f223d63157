import Crypto
import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Outbound
import Payments

/// The checks that call out: each proves a key or an address works without changing anything.
extension PreflightCheck {
    package func online() -> [Result] {
        var results = Environment.allCases.map(appleHost)
        results.append(paymentProvider())
        if configuration.webhooks.isEnabled { results.append(webhookReceiver()) }
        results.append(health())
        results.append(appSiteAssociation())
        return results
    }

    /// Apple's API as reporting calls it: through `apple.proxy`, trusting `apple.caFile`.
    private var appleClient: HTTPClient { client(proxy: configuration.apple.proxy, caFile: configuration.apple.caFile) }

    /// The server's own public address, as a phone reaches it: directly, trusting the system's certificates
    /// (Apple's proxy and `apple.caFile` are for Apple's API; a certificate only that file trusts fails on phones).
    private var directClient: HTTPClient { client(proxy: nil, caFile: nil) }

    private func client(proxy: String?, caFile: String?) -> HTTPClient {
        var http = HTTPClient.Configuration()
        http.totalTimeout = .seconds(10)
        http.caFile = caFile
        http.proxy = proxy
        return HTTPClient(configuration: http)
    }

    /// Retrieve External Purchase Report of a random `requestIdentifier`, signed with the key: Apple finds no
    /// such report (`404`, or its `NotFoundError`) only after it took the JWT; `401` is the key refused.
    func appleHost(_ environment: Environment) -> Result {
        let name = "apple \(environment.rawValue)"
        guard case .success(let credentials) = AppleCredentials.load(configuration.apple) else {
            return Self.fail(name, "no usable key (see apple key)")
        }
        let api = ExternalPurchaseAPIClient(
            credentials: credentials,
            productionURL: configuration.apple.productionURL,
            sandboxURL: configuration.apple.sandboxURL,
            httpClient: appleClient
        )
        let identifier = UUID().uuidString.lowercased()
        let retrieved = api.retrieve(
            requestIdentifier: RequestIdentifier(identifier),
            environment: environment,
            bundleId: configuration.apps.first?.bundleId ?? "",
            now: clock.nowMilliseconds()
        )
        switch RetrievedReport.read(retrieved, requestIdentifier: RequestIdentifier(identifier)) {
        case .notFound:
            // Any server answers 404 to a path it lacks: only Apple's error body (`errorCode`, `errorMessage`, or
            // `errors`; Apple: Retrieve External Purchase Report, `NotFoundError`) shows Apple read the JWT.
            guard case .success(let answer) = retrieved, RetrievedReport.isApplesError(answer.body) else {
                let setting = environment == .sandbox ? "apple.sandboxURL" : "apple.productionURL"
                return Self.fail(name, "the answer is not Apple's (no error body): check \(setting)")
            }
            return Self.pass(name, "the key is accepted (a report that does not exist is not found)")
        case .refused(let status):
            return Self.fail(name, "Apple refused the key (\(status)): check apple.issuerId, apple.keyId and the .p8")
        case .held:
            return Self.fail(name, "Apple holds a report under a random identifier")
        case .rateLimited:
            return Self.fail(name, "Apple answered 429: try again in a minute")
        case .unknown(let why):
            let setting = environment == .sandbox ? "apple.sandboxURL" : "apple.productionURL"
            let also = [("apple.proxy", configuration.apple.proxy), ("apple.caFile", configuration.apple.caFile)]
                .compactMap { $0.1 == nil ? nil : ", " + $0.0 }.joined()
            return Self.fail(name, "\(why) (check \(setting)\(also))")
        }
    }

    /// The provider reads one harmless object with its key.
    func paymentProvider() -> Result {
        do {
            let provider = try configuration.payments.makeProvider(clock: clock)
            return Self.pass("payment provider", "\(provider.id.rawValue): \(try provider.checkCredentials())")
        } catch let error as PaymentError {
            return Self.fail("payment provider", error.description + providerHint(error.status))
        } catch {
            return Self.fail("payment provider", "\(error)")
        }
    }

    /// What to look at for the provider's refusal: its key for 401 and 403, its address for 404.
    private func providerHint(_ status: Int?) -> String {
        let provider = configuration.payments.provider.rawValue
        let key = configuration.payments.provider == .paddle ? "apiKey" : "secretKey"
        switch status {
        case 401, 403: return " (check payments.\(provider).\(key): the key, its mode, its permissions)"
        case 404: return " (check payments.\(provider).apiBase)"
        default: return ""
        }
    }

    /// A signed `linkout.check` event, as the entitlement events are signed: the receiver must answer 2xx.
    func webhookReceiver() -> Result {
        let id = "evt_check_" + Hex.encode((0..<8).map { _ in UInt8.random(in: 0...255) })
        let now = clock.nowMilliseconds()
        let body = Array(#"{"created":\#(now / 1000),"id":"\#(id)","type":"linkout.check"}"#.utf8)
        let request = HTTPClientRequest(
            method: "POST",
            url: configuration.webhooks.url,
            headers: [
                ("Content-Type", "application/json"),
                ("Linkout-Event-Id", id),
                ("Linkout-Event-Type", "linkout.check"),
                (
                    "Linkout-Signature",
                    TimestampedHMAC.linkout(secret: configuration.webhooks.secret).header(
                        body: body,
                        timestamp: now / 1000
                    )
                ),
            ],
            body: body
        )
        do {
            // Sent as the server sends its events (`WebhookSender.http`): a verdict that holds in production.
            let response = try HTTPClient(configuration: WebhookSender.http(configuration.webhooks)).perform(request)
            guard (200..<300).contains(response.status) else {
                // A receiver refusing the signature usually answers 400 or 401.
                let hint =
                    [400, 401, 403].contains(response.status)
                    ? " (does the receiver check Linkout-Signature with webhooks.secret?)" : ""
                return Self.fail(
                    "webhook receiver",
                    "\(ShownURL.text(configuration.webhooks.url)) answered \(response.status)\(hint)"
                )
            }
            return Self.pass("webhook receiver", "took a signed linkout.check event (\(response.status))")
        } catch {
            return Self.fail("webhook receiver", "no answer: \(error.description)")
        }
    }

    /// `publicURL/healthz` answers from outside, as people and the App Store reach it.
    func health() -> Result {
        let url = configuration.server.baseURL + "/healthz"
        do {
            let response = try directClient.perform(HTTPClientRequest(method: "GET", url: url))
            guard Self.isLinkoutHealth(response) else {
                return Self.fail(
                    "public health",
                    "\(url) answered \(response.status)\(response.status == 200 ? ", not linkout's ok" : ""): "
                        + "check server.publicURL and what serves it"
                )
            }
            return Self.pass("public health", "\(url) answers 200")
        } catch {
            return Self.fail("public health", "\(url): \(error.description)")
        }
    }

    /// The app-site association file, when the server makes one (an app names its Team ID and its universal
    /// link paths): served as JSON naming every such app's ID exactly (`applinks.details[].appIDs`).
    func appSiteAssociation() -> Result {
        let expected = AppSiteAssociationRoute.served(configuration.apps).map(\.appID)
        guard !expected.isEmpty else {
            return Self.pass("app-site association", "not served: no app names both a teamId and universalLinkPaths")
        }
        let url = configuration.server.baseURL + "/.well-known/apple-app-site-association"
        do {
            let response = try directClient.perform(HTTPClientRequest(method: "GET", url: url))
            let named = Self.associatedAppIDs(response.body)
            let missing = expected.filter { !named.contains($0) }
            guard response.status == 200, missing.isEmpty else {
                return Self.fail(
                    "app-site association",
                    "\(url) answered \(response.status) without \(missing.joined(separator: ", "))"
                )
            }
            return Self.pass("app-site association", "\(url) names \(expected.joined(separator: ", "))")
        } catch {
            return Self.fail("app-site association", "\(url): \(error.description)")
        }
    }

    /// The app IDs an app-site association file names (`applinks.details[].appIDs`).
    static func associatedAppIDs(_ body: [UInt8]) -> Set<String> {
        guard let file = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any],
            let details = (file["applinks"] as? [String: Any])?["details"] as? [[String: Any]]
        else { return [] }
        return Set(details.flatMap { $0["appIDs"] as? [String] ?? [] })
    }
}
