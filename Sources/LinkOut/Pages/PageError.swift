import HTTPServer

/// A page handler's refusal, thrown where the request cannot go on: the server answers with the message page
/// (`Pages.message`) in the language the request asks for, so the handler builds no page for it.
struct PageError: HTTPResponseError {
    let pages: Pages
    let status: HTTPStatus
    /// Locale keys of the page's title and message.
    let title: String
    let message: String
    /// The locale key of the text shown below the message, if any.
    let detail: String?
    /// The app the page is about, for its name and the way back to it.
    let app: AppConfiguration?

    func response(to request: HTTPRequest) -> HTTPResponse {
        let language = pages.language(for: request)
        return pages.message(
            status: status,
            title: title,
            message: message,
            detail: detail.map { pages.localization.text($0, language: language) },
            request: request,
            app: app
        )
    }
}

extension Pages {
    /// The message page with `title` and `message` (and `detail`, all locale keys), as an error to throw.
    func error(
        _ status: HTTPStatus,
        title: String,
        message: String,
        detail: String? = nil,
        app: AppConfiguration? = nil
    ) -> PageError {
        PageError(pages: self, status: status, title: title, message: message, detail: detail, app: app)
    }
}
