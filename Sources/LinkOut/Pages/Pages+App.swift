import Payments

/// What a page shows about the app it sells for: a person about to pay outside the App Store wants to see which
/// app this is, who sells, how to get back to the app, and the seller's terms.
extension Pages {
    func add(_ app: AppConfiguration, language: String, to context: inout Template.Context) {
        let name = ["app": app.name]
        context["app_name"] = .text(app.name)
        context["app_initial"] = .text(app.name.first.map { String($0).uppercased() } ?? "")
        context["app_icon"] = .text(app.icon ?? "")
        context["open_url"] = .text(app.openURL ?? "")
        context["open_app"] = .text(localization.text("open_app", language: language, name))
        context["return_to_app"] = .text(localization.text("return_to_app", language: language, name))
        context["sold_by"] = .text(
            app.seller.map { localization.text("sold_by", language: language, ["seller": $0]) } ?? ""
        )
        var links: [Template.Context] = []
        let pages: [(String?, String)] = [
            (app.legal.terms, "legal_terms"), (app.legal.refunds, "legal_refunds"),
            (app.legal.privacy, "legal_privacy"), (app.legal.imprint, "legal_imprint"),
        ]
        for case (let href?, let key) in pages {
            links.append(["href": .text(href), "label": .text(localization.text(key, language: language))])
        }
        if let email = app.legal.supportEmail {
            links.append([
                "href": .text("mailto:" + email),
                "label": .text(localization.text("legal_support", language: language, ["email": email])),
            ])
        }
        context["legal"] = .list(links)
        context["has_legal"] = .flag(!links.isEmpty)
    }

    /// A price with its billing period where it has one: `€3.99/month`, `3,99 €/Monat`, `€9.99 every 3 months`.
    func price(_ amount: Money, interval: BillingInterval?, language: String) -> String {
        let text = amount.formatted(language: language)
        guard let interval else { return text }
        let key =
            interval.count == 1
            ? "price_per_" + interval.unit.rawValue
            : "price_every_" + interval.unit.rawValue
        return localization.text(key, language: language, ["amount": text, "count": String(interval.count)])
    }
}
