import Foundation
import HTTPServer

/// Renders the HTML pages from `Public/templates/` with the texts of the visitor's language, and gives every
/// page the same security headers.
struct Pages: Sendable {
    let checkout: Template
    let message: Template
    let paymentDemo: Template
    let paymentResult: Template
    let paymentRetry: Template
    let localization: Localization
    /// `publicURL` is https: cookies get `Secure` and pages get HSTS.
    let isSecure: Bool
    /// The app a page is about when the request does not say (an unknown checkout, a rate-limited post): only a
    /// shop that sells for one app can know it; with several, naming a guess would send people to the wrong one.
    let onlyApp: AppConfiguration?

    static func load(publicDir: String, isSecure: Bool, apps: [AppConfiguration]) throws(ConfigurationError) -> Pages {
        let templates = (publicDir as NSString).appendingPathComponent("templates")
        do {
            return Pages(
                checkout: try Template.load("checkout.html", from: templates),
                message: try Template.load("message.html", from: templates),
                paymentDemo: try Template.load("payment-demo.html", from: templates),
                paymentResult: try Template.load("payment-result.html", from: templates),
                paymentRetry: try Template.load("payment-retry.html", from: templates),
                localization: try Localization.load(from: (publicDir as NSString).appendingPathComponent("locales")),
                isSecure: isSecure,
                onlyApp: apps.count == 1 ? apps.first : nil
            )
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw ConfigurationError(field: "server.publicDir", problem: "\(error)")
        }
    }

    /// No third-party sources and no inline script at all; never framed. Forms post only back to us, but the
    /// checkout form's answer is a redirect to the provider's https payment page, and Chromium holds a form's
    /// redirects to `form-action` too: without `https:` the pay button leads nowhere.
    static let contentSecurityPolicy =
        "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self' https:; base-uri 'none'; "
        + "frame-ancestors 'none'"

    /// The headers every page carries.
    func securityHeaders() -> HTTPHeaders {
        var headers: HTTPHeaders = [
            "Content-Security-Policy": Self.contentSecurityPolicy,
            "X-Content-Type-Options": "nosniff",
            "X-Frame-Options": "DENY",
            "Referrer-Policy": "no-referrer",
            "Cache-Control": "no-store",
        ]
        if isSecure { headers.add(name: "Strict-Transport-Security", value: "max-age=31536000") }
        return headers
    }

    func html(_ body: [UInt8], status: HTTPStatus = .ok, extraHeaders: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        var headers = securityHeaders()
        headers.add(name: "Content-Type", value: "text/html; charset=utf-8")
        for field in extraHeaders { headers.add(name: field.name, value: field.value) }
        return HTTPResponse(status: status, headers: headers, body: body)
    }

    /// `303 See Other` to `location`, with the headers every page carries: after a form post, and from the
    /// landing to its clean checkout URL.
    func seeOther(_ location: String, extraHeaders: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        var headers = securityHeaders()
        headers.add(name: "Location", value: location)
        for field in extraHeaders { headers.add(name: field.name, value: field.value) }
        return HTTPResponse(status: .seeOther, headers: headers)
    }

    /// A page with a title and a message, both from the locale files; `detail` is shown below in plain text.
    /// Every such page leads back: an "Open <app>" button when the app is known, and the request id as a
    /// reference a person can quote to support (the same id is in the access log).
    func message(
        status: HTTPStatus,
        title: String,
        message: String,
        detail: String? = nil,
        request: HTTPRequest,
        app: AppConfiguration? = nil
    ) -> HTTPResponse {
        let language = language(for: request)
        var context = context(language: language, app: app ?? onlyApp, request: request)
        context["title"] = .text(localization.text(title, language: language))
        context["message"] = .text(localization.text(message, language: language))
        context["detail"] = .text(detail ?? "")
        context["is_error"] = .flag(status.code >= 400)
        return html(self.message.render(context), status: status)
    }

    /// What every page starts from: the texts of `language`, the page's language, the request id as the
    /// support reference, and, when the page is about an app, its name, icon, seller, way back and legal links.
    func context(language: String, app: AppConfiguration?, request: HTTPRequest) -> Template.Context {
        var context = localization.texts(language)
        context["lang"] = .text(language)
        context["reference"] = .text(request.id)
        if let app { add(app, language: language, to: &context) }
        return context
    }

    func language(for request: HTTPRequest) -> String {
        localization.language(acceptLanguage: request.headers["accept-language"])
    }
}
