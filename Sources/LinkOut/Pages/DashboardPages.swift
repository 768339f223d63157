import Foundation

/// The operator dashboard's templates (`Public/templates/admin-*.html`), English only.
struct DashboardPages: Sendable {
    let login: Template
    let overview: Template
    let tokens: Template
    let token: Template
    let money: Template

    static func load(publicDir: String) throws(ConfigurationError) -> DashboardPages {
        let templates = (publicDir as NSString).appendingPathComponent("templates")
        do {
            return DashboardPages(
                login: try Template.load("admin-login.html", from: templates),
                overview: try Template.load("admin-dashboard.html", from: templates),
                tokens: try Template.load("admin-tokens.html", from: templates),
                token: try Template.load("admin-token.html", from: templates),
                money: try Template.load("admin-money.html", from: templates)
            )
        } catch {
            throw ConfigurationError(field: "server.publicDir", problem: "\(error)")
        }
    }
}
