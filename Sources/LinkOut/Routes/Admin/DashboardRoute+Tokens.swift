import Domain
import Foundation
import HTTPServer
import Storage

/// `GET /admin/find?q=&environment=&after=&offset=`: the token list, searchable by externalPurchaseId prefix, and
/// `GET /admin/detail?id=<externalPurchaseId>` (a query, since an id may hold any character, `/` too): one token with its visits, payments and reports. Every value comes
/// from outside (tokens, UTM tags, Apple's answers) and goes through the template's escaping.
extension DashboardRoute {
    static let pageSize = 50

    func find(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let session = try sessions.signedIn(request) else { return requireSignIn(request) }
        let query = (request.queryValue("q") ?? "").trimmingCharacters(in: .whitespaces)
        // A value the page never links is refused, not read as "any" or "the start": a list that quietly shows
        // something else than was asked is worse than an error.
        let environmentText = request.queryValue("environment") ?? ""
        let environment = Environment(rawValue: environmentText)
        guard environmentText.isEmpty || environment != nil else {
            return HTTPError(.badRequest, "environment is production, sandbox, or empty for any.").response
        }
        // The API's rule (`Paging`): bounded, as the caption adds to it.
        guard let offset = Paging.offset(request.queryValue("offset")) else {
            return HTTPError(.badRequest, "offset is a whole number from 0 to \(Paging.maxOffset).").response
        }
        // The next page starts after the last token shown (keyset paging: as quick at the end of a long ledger
        // as at its start); `offset` still works for links made before.
        let afterText = request.queryValue("after")
        let after = afterText.flatMap(TokenCursor.init)
        guard afterText == nil || after != nil else {
            return HTTPError(.badRequest, "after is the cursor a page's next link carries.").response
        }
        let backlog = ledger.awaitRecentVisits()
        // One more than a page tells whether there is a next one.
        let rows = try ledger.tokens.tokens(
            limit: Self.pageSize + 1,
            offset: offset,
            search: query.isEmpty ? nil : query,
            environment: environment,
            after: after
        )
        let shown = rows.prefix(Self.pageSize)
        var context: Template.Context = [
            "csrf": .text(sessions.csrfToken(session, scope: .signedIn)),
            "on_tokens": .flag(true),
            "query": .text(query),
            "has_tokens": .flag(!shown.isEmpty),
            "caption": .text(
                (after == nil ? "Tokens \(offset + 1)–\(offset + shown.count)" : "Tokens, continued,")
                    + (query.isEmpty
                        ? ", first seen first" : " whose externalPurchaseId starts with “\(query)”, in id order")
                    + (backlog.visits == 0 ? "" : " (\(backlog.visits) visits just made are still being filed)")
            ),
        ]
        context["environments"] = .list(
            [("", "Any"), ("production", "Production"), ("sandbox", "Sandbox")].map { value, label in
                ["value": .text(value), "label": .text(label), "selected": .flag(environment?.rawValue == value)]
            }
        )
        var reportStates: [String: String] = [:]
        for token in shown {
            reportStates[token.token.externalPurchaseId.rawValue] = try ledger.reports.reports(
                for: token.token.externalPurchaseId
            ).last.map {
                "\($0.status) \($0.state.rawValue)"
            }
        }
        context["tokens"] = .list(
            shown.map { token in
                [
                    "href": .text(Self.detailPath(token.token.externalPurchaseId)),
                    "id": .text(token.token.externalPurchaseId.rawValue),
                    "environment": .text(token.token.environment.rawValue),
                    "source": .text(token.source.rawValue),
                    "first_seen": .text(DashboardTime.timestamp(token.firstSeenAt)),
                    "visits": .text(String(token.visitCount)),
                    "report": .text(reportStates[token.token.externalPurchaseId.rawValue] ?? "none yet"),
                ]
            }
        )
        let link = { (offset: Int, after: TokenCursor?) -> String in
            var parts = ["offset=\(offset)"]
            if let after {
                parts = ["after=" + (after.text.addingPercentEncoding(withAllowedCharacters: Self.unreserved) ?? "")]
            }
            if !query.isEmpty {
                parts.append("q=" + (query.addingPercentEncoding(withAllowedCharacters: Self.unreserved) ?? ""))
            }
            if let environment { parts.append("environment=\(environment)") }
            return "/admin/find?" + parts.joined(separator: "&")
        }
        if offset > 0 || after != nil {
            context["previous_href"] = .text(link(after == nil ? max(0, offset - Self.pageSize) : 0, nil))
        }
        if rows.count > Self.pageSize, let last = shown.last {
            context["next_href"] = .text(link(0, TokenCursor(after: last)))
        }
        return pages.html(templates.tokens.render(context))
    }

    func detail(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let session = try sessions.signedIn(request) else { return requireSignIn(request) }
        let id = request.queryValue("id") ?? ""
        guard let token = try ledger.tokens.token(ExternalPurchaseID(id)) else { return notFound(request) }
        var context: Template.Context = [
            "csrf": .text(sessions.csrfToken(session, scope: .signedIn)),
            "id": .text(token.token.externalPurchaseId.rawValue),
        ]
        let facts: [(String, String)] = [
            ("Environment", token.token.environment.rawValue),
            ("Source", token.source == .url ? "landing page" : token.source.rawValue),
            ("Bundle id", token.token.bundleId.rawValue),
            ("App Apple id", String(token.token.appAppleId)),
            ("Token type", token.token.tokenType ?? "—"),
            ("Token created", DashboardTime.timestamp(token.token.tokenCreationDate)),
            ("Token expires", token.token.tokenExpirationDate.map(DashboardTime.timestamp) ?? "never"),
            ("First seen", DashboardTime.timestamp(token.firstSeenAt)),
            ("Last seen", DashboardTime.timestamp(token.lastSeenAt)),
            ("App account token", token.appAccountToken ?? "—"),
            ("Checkout", token.checkoutId.rawValue),
        ]
        context["facts"] = .list(facts.map { ["name": .text($0.0), "value": .text($0.1)] })
        let visits = try ledger.tokens.visits(for: ExternalPurchaseID(id), limit: 100)
        context["has_visits"] = .flag(!visits.isEmpty)
        context["visits"] = .list(
            visits.map { visit in
                [
                    "at": .text(DashboardTime.timestamp(visit.visitedAt)),
                    "path": .text(visit.landingPath),
                    "utm": .text(
                        visit.utm.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
                    ),
                ]
            }
        )
        let intents = try ledger.tokens.checkoutIntents(checkoutId: token.checkoutId)
        context["has_intents"] = .flag(!intents.isEmpty)
        context["intents"] = .list(
            intents.map { intent in
                [
                    "at": .text(DashboardTime.timestamp(intent.createdAt)),
                    "product": .text(intent.productId.rawValue),
                    "amount": .text("\(intent.amount) \(intent.currency)"),
                ]
            }
        )
        let purchases = try ledger.payments.purchases(externalPurchaseId: ExternalPurchaseID(id))
        context["has_purchases"] = .flag(!purchases.isEmpty)
        context["purchases"] = .list(
            purchases.map { purchase in
                [
                    "id": .text(purchase.purchaseId),
                    "product": .text(purchase.productId?.rawValue ?? "—"),
                    "status": .text(purchase.status.rawValue),
                    "total": .text(Self.amount(purchase.amountTotal, currency: purchase.currency)),
                    "at": .text(DashboardTime.timestamp(purchase.createdAt)),
                ]
            }
        )
        let reports = try ledger.reports.reports(for: ExternalPurchaseID(id))
        context["has_reports"] = .flag(!reports.isEmpty)
        context["reports"] = .list(
            reports.map { report in
                [
                    "request": .text(report.requestIdentifier.rawValue),
                    "status": .text(report.status.rawValue),
                    "state": .text(report.state.rawValue),
                    "attempts": .text(String(report.attempts)),
                    "answer": .text(Self.reason(status: report.lastHTTPStatus, text: report.lastResponse)),
                ]
            }
        )
        return pages.html(templates.token.render(context))
    }

    /// `29.99 EUR` from minor units (`CurrencyExponent`), as a person reads them (`500 ISK`).
    static func amount(_ minorUnits: Int64, currency: CurrencyCode) -> String {
        let digits = CurrencyExponent.displayDigits(minorUnits, currency: currency.rawValue)
        return CurrencyExponent.decimalText(minorUnits, currency: currency.rawValue, digits: digits) + " "
            + currency.rawValue
    }
}
