import Domain
import Foundation
import HTTPServer
import Logging
import Payments

/// One line and one metric sample per answered request, labelled by route: never the path or query, which can
/// hold a token or a checkout id.
struct AccessLog: Sendable {
    let logger: Logger
    let metrics: Metrics
    let landingPaths: Set<String>
    /// `apple.notificationPath`.
    var notificationPath = "/notifications/appstore"
    /// `logging.accessLog`.
    var mode = AccessLogMode.all

    func record(_ request: HTTPRequest, _ status: HTTPStatus, _ nanoseconds: UInt64) {
        let route = routeName(request)
        metrics.observeRequest(route: route, status: status.code, nanoseconds: nanoseconds)
        guard logger.level <= .info, mode.logs(status: status.code) else { return }
        logger.info(
            "request",
            [
                // A method is any token the client makes up, up to the head's size: 20 characters name any real one.
                "request.id": request.id, "http.method": String(request.method.prefix(20)), "route": route,
                "status": String(status.code), "duration_ms": Self.milliseconds(nanoseconds),
            ]
        )
    }

    /// `nanoseconds` as milliseconds with three decimals ("0.079"), in integer arithmetic: `String(format:)`
    /// went through Foundation's formatter on every request.
    static func milliseconds(_ nanoseconds: UInt64) -> String {
        let microseconds = (nanoseconds + 500) / 1000
        let fraction = String(microseconds % 1000)
        return String(microseconds / 1000) + "." + String(repeating: "0", count: 3 - fraction.utf8.count) + fraction
    }

    /// A bounded label for metrics and logs: the route, never the raw path.
    func routeName(_ request: HTTPRequest) -> String {
        let path = request.path
        if request.method == "-" { return "invalid" }
        if landingPaths.contains(String(path)) { return "landing" }
        if path.hasPrefix("/checkout/") {
            if path.hasSuffix("/done") { return "payment_result" }
            return path.hasSuffix("/qr.svg") ? "payment_qr" : "checkout"
        }
        if path.hasPrefix(DemoPaymentRoute.pathPrefix) { return "demo_payment" }
        // `stripe_webhook`: one label per registered provider, never one per path someone makes up.
        if path.hasPrefix("/webhooks/"),
            let provider = ProviderRegistry.all.first(where: { "/webhooks/" + $0.id.rawValue == path })
        {
            return provider.id.rawValue + "_webhook"
        }
        if path.hasPrefix("/static/") { return "static" }
        if path.hasPrefix("/v1/tokens/") { return "line_items_api" }
        if path == "/admin" || path.hasPrefix("/admin/") { return "admin" }
        if path == notificationPath { return "appstore_notifications" }
        switch path {
        case "/v1/tokens": return "tokens_api"
        case "/v1/backend/tokens": return "backend_tokens_api"
        case "/v1/redemptions": return "redemptions_api"
        case "/v1/purchases": return "purchases_api"
        case "/v1/app/redemptions": return "app_redemptions_api"
        case "/v1/app/entitlements": return "app_entitlements_api"
        case "/.well-known/jwks.json": return "jwks"
        case "/.well-known/apple-app-site-association": return "app_site_association"
        case "/readyz": return "readyz"
        case "/healthz": return "healthz"
        case "/favicon.ico", "/apple-touch-icon.png": return "icon"
        case "/metrics": return "metrics"
        case "/openapi.json": return "openapi"
        default: return "other"
        }
    }
}
