import Foundation
import HTTPServer

/// `GET /.well-known/apple-app-site-association`, generated from `apps[].teamId` and `universalLinkPaths`, for links to
/// linkout's domain that people tap elsewhere (a receipt e-mail). Apple fetches it over https with no redirect (Apple:
/// "Supporting associated domains"); 404 when no app names a Team ID.
struct AppSiteAssociationRoute: Sendable {
    let body: [UInt8]?

    init(apps: [AppConfiguration]) {
        let details: [[String: Any]] = apps.compactMap { app in
            guard let team = app.teamId, !app.universalLinkPaths.isEmpty else { return nil }
            return [
                "appIDs": ["\(team).\(app.bundleId)"],
                "components": app.universalLinkPaths.map { ["/": $0] },
            ]
        }
        guard !details.isEmpty,
            let data = try? JSONSerialization.data(
                withJSONObject: ["applinks": ["details": details]],
                options: [.sortedKeys, .withoutEscapingSlashes]
            )
        else {
            body = nil
            return
        }
        body = Array(data)
    }

    func show(_ request: HTTPRequest) -> HTTPResponse {
        guard let body else { return JSONResponse.error(.notFound, "not_configured", "No app names a teamId.") }
        return HTTPResponse(
            status: .ok,
            headers: ["Content-Type": "application/json", "Cache-Control": "max-age=3600"],
            body: body
        )
    }
}
