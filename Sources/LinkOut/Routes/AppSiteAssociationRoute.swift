import Foundation
import HTTPServer

/// `GET /.well-known/apple-app-site-association`, generated from `apps[].teamId` and `universalLinkPaths`, for links to
/// linkout's domain that people tap elsewhere (a receipt e-mail). Apple fetches it over https with no redirect (Apple:
/// "Supporting associated domains"); 404 when no app names a Team ID.
struct AppSiteAssociationRoute: Sendable {
    let body: [UInt8]?

    /// The app ID (`<Team ID>.<bundle id>`) each served app goes by: an app that names its Team ID and the paths
    /// its universal links open. `linkout check --online` looks for exactly these.
    static func served(_ apps: [AppConfiguration]) -> [(appID: String, app: AppConfiguration)] {
        apps.compactMap { app in
            guard let team = app.teamId, !app.universalLinkPaths.isEmpty else { return nil }
            return ("\(team).\(app.bundleId)", app)
        }
    }

    init(apps: [AppConfiguration]) {
        let details: [[String: Any]] = Self.served(apps).map { served in
            ["appIDs": [served.appID], "components": served.app.universalLinkPaths.map { ["/": $0] }]
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
        guard let body else {
            return JSONResponse.error(
                .notFound,
                "not_configured",
                "No app names both a teamId and universalLinkPaths."
            )
        }
        return HTTPResponse(
            status: .ok,
            headers: ["Content-Type": "application/json", "Cache-Control": "max-age=3600"],
            body: body
        )
    }
}
