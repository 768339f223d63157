import Domain
import Foundation
import Lifecycle
import Payments
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// What a person about to pay sees, through the real server: who sells, what is bought and on which terms, the
/// way back to the app from every page, and the shop's icons.
@Suite("Pages")
struct PageContentTests {
    /// A tokenless visit's checkout page in `language`.
    static func checkout(_ live: LiveApplication, language: String = "en") throws -> String {
        let landing = try live.get("/")
        let location = try #require(landing.header("Location"))
        let page = try live.get(location + "?currency=EUR", headers: ["Accept-Language": language])
        #expect(page.status == 200)
        return page.text
    }

    @Test func theCheckoutSaysWhoSellsWhatAndOnWhichTerms() throws {
        let live = try LiveApplication()
        let page = try Self.checkout(live)
        // Who sells, and which app.
        #expect(
            page.contains(
                #"<span class="app-name">Example</span><span class="seller">Sold by Example Apps GmbH</span>"#
            )
        )
        #expect(page.contains(#"<span class="app-icon" aria-hidden="true">E</span>"#))
        #expect(page.contains("You buy from Example Apps GmbH on this website, not through the App Store."))
        // What each product includes, and its price with the period where it has one.
        #expect(page.contains("All Pro features for good: unlimited projects, export and sync."))
        #expect(page.contains(#"<span class="price">€3.99/month</span>"#))
        // The demo's sales carry no tax (Apple is told tax 0), so the page says nothing of VAT.
        #expect(!page.contains(#"<p class="tax">"#) && !page.contains("VAT"))
        // The amount on the button, one per product, and the one without an amount for browsers without :has().
        #expect(
            page.contains(
                #"<button type="submit" class="pay-for" id="pay-0" name="pay_for" value="pro.lifetime">Pay €29.99</button>"#
            )
        )
        #expect(
            page.contains(
                #"<button type="submit" class="pay-for" id="pay-1" name="pay_for" value="pro.monthly">Subscribe – €3.99/month</button>"#
            )
        )
        #expect(page.contains(#"id="product-0" name="product" value="pro.lifetime""#))
        // The subscription's terms: renewal at its price, first charge date, where to cancel (not iOS Settings).
        let today = LocaleFormats.shared.day(Clock.system.nowMilliseconds(), language: "en")
        #expect(page.contains("Renews automatically at €3.99/month until you cancel. First charge today, \(today)."))
        #expect(page.contains("Cancel any time by writing to support@example.com"))
        #expect(page.contains("It is not in your iPhone&#39;s Settings"))
        // The one-time product has no renewal terms.
        let lifetime = try #require(page.firstRange(of: "product-0-details").map { page[$0.upperBound...] })
        #expect(!lifetime.prefix(200).contains("Renews"))
        // The provider, the way back, and the seller's legal footer.
        #expect(page.contains("Demo shop: the next page takes no payment and nothing is charged."))
        #expect(
            page.contains(#"<p class="back"><a href="https://example.com/open">Cancel and return to Example</a></p>"#)
        )
        for link in [
            #"<a href="https://example.com/terms">Terms of sale</a>"#,
            #"<a href="https://example.com/refunds">Refunds and cancellation</a>"#,
            #"<a href="https://example.com/privacy">Privacy</a>"#,
            #"<a href="https://example.com/imprint">Imprint</a>"#,
            #"<a href="mailto:support@example.com">Support: support@example.com</a>"#,
        ] {
            #expect(page.contains(link), "\(link)")
        }
        #expect(page.contains("Apple&#39;s refunds and Family Sharing do not apply to it"))
        // The old claim with nothing behind it is gone.
        #expect(!page.contains("processed securely"))
        // Landmarks and the icons.
        #expect(page.contains("<main>") && page.contains("<footer>") && page.contains(#"<html lang="en">"#))
        #expect(page.contains(#"<link rel="icon" href="/favicon.ico""#))
        #expect(page.contains(#"<link rel="apple-touch-icon" href="/apple-touch-icon.png">"#))
        #expect(page.utf8.count < 6000, "the page stays small: \(page.utf8.count) bytes")
    }

    @Test func theGermanButtonNamesAPaidOrder() throws {
        let live = try LiveApplication()
        let page = try Self.checkout(live, language: "de-DE")
        #expect(page.contains(#"<html lang="de">"#))
        // BGB §312j (3): the button that places the order must say that it costs money.
        #expect(page.contains(">Zahlungspflichtig bestellen – 29,99\u{A0}€</button>"))
        #expect(page.contains(">Zahlungspflichtig abonnieren – 3,99\u{A0}€/Monat</button>"))
        #expect(page.contains(#"<button type="submit" class="pay-any">Zahlungspflichtig bestellen</button>"#))
        #expect(page.contains("Verkauf durch Example Apps GmbH"))
        // The demo's sales carry no tax: no word of VAT (Stripe's page with tax rates says it, below).
        #expect(!page.contains("Mehrwertsteuer"))
        #expect(page.contains("Abbrechen und zurück zu Example"))
        #expect(page.contains(">Impressum</a>"))
    }

    @Test(arguments: [
        ("fr-FR", "Payer 29,99\u{A0}€", "3,99\u{A0}€/mois"), ("nl-NL", "Betaal €\u{A0}29,99", "€\u{A0}3,99/maand"),
        ("ja-JP", "€29.99を支払う", "€3.99/月"), ("sv-SE", "Betala 29,99\u{A0}€", "29,99\u{A0}€"),
    ])
    func otherStorefrontLanguagesFormatTheirOwnWay(language: String, button: String, subscription: String) throws {
        let live = try LiveApplication()
        let page = try Self.checkout(live, language: language)
        #expect(page.contains(#"<html lang="\#(language.prefix(2))">"#))
        #expect(page.contains(button))
        #expect(page.contains(subscription))
    }

    @Test func withStripeThePageNamesItAndSaysTaxIsAdded() throws {
        let harness = try PaymentHarness(provider: .stripe) { configuration in
            configuration.payments[.stripe, "automaticTax"] = "true"
            configuration.payments[.stripe, "secretKey"] = "sk_live_0123456789abcdef"
        }
        let page = try Self.checkout(harness.live)
        #expect(page.contains("You pay on the payment page of Stripe, our payment provider."))
        #expect(page.contains("Your card details go to Stripe, not to Example Apps GmbH."))
        #expect(page.contains("Tax is added where it applies; you see the total before you pay."))
        #expect(!page.contains("Demo shop") && !page.contains("test mode"))
    }

    @Test func stripesTestModeSaysNothingIsCharged() throws {
        let harness = try PaymentHarness(provider: .stripe) { $0.payments.taxRates = .standard }
        let page = try Self.checkout(harness.live)
        #expect(page.contains("in test mode: use a test card; nothing is charged."))
        #expect(page.contains(#"<p class="tax">Prices include VAT.</p>"#))
        let german = try Self.checkout(harness.live, language: "de-DE")
        #expect(german.contains(#"<p class="tax">Preise inklusive Mehrwertsteuer.</p>"#))
    }

    /// Without tax rates in force (`"none"`, or unset in test mode) a Stripe sale reports tax 0: the page does not
    /// say VAT is included.
    @Test func pricesWithoutTaxSayNothingOfVAT() throws {
        for rates: TaxRates? in [TaxRates.none, nil] {
            let harness = try PaymentHarness(provider: .stripe) { $0.payments.taxRates = rates }
            let page = try Self.checkout(harness.live)
            #expect(page.contains("in test mode: use a test card; nothing is charged."))
            #expect(!page.contains(#"<p class="tax">"#) && !page.contains("VAT"), "\(String(describing: rates))")
        }
    }

    @Test func theStylesheetShowsEveryAmountButtonTheServerRenders() throws {
        let live = try LiveApplication()
        let css = try live.get("/static/css/linkout.css")
        #expect(css.status == 200)
        for index in 0..<CheckoutRoute.maxAmountButtons {
            #expect(css.text.contains(".checkout:has(#product-\(index):checked) #pay-\(index)"), "\(index)")
        }
        #expect(css.text.contains(".product:has(:checked)"))
        #expect(css.text.contains(".product:has(:focus-visible)"))
    }

    @Test func templatesAndTextsAreNotServedOnlyWhatPagesLink() throws {
        let live = try LiveApplication()
        #expect(try live.get("/static/css/admin.css").status == 200)
        #expect(try live.get("/favicon.ico").status == 200)
        for path in [
            "/static/templates/checkout.html", "/static/templates/partials/meta.html", "/static/locales/en.json",
        ] {
            #expect(try live.get(path).status == 404, "\(path)")
        }
    }

    @Test func aCatalogTooLongForAmountButtonsKeepsOneButton() throws {
        let live = try LiveApplication { configuration in
            let base = configuration.catalog[0]
            configuration.catalog = (0...CheckoutRoute.maxAmountButtons).map { index in
                var product = base
                product.id = "item.\(index)"
                return product
            }
        }
        let page = try Self.checkout(live)
        #expect(!page.contains("pay-for"))
        #expect(page.contains(#"class="pay-any">Continue to payment</button>"#))
        #expect(page.contains(#"id="product-8""#))
    }

    @Test func errorPagesLeadBackToTheAppWithAReference() throws {
        let live = try LiveApplication {
            $0.landing.allowWithoutToken = false
            $0.server.trustedProxies = ["127.0.0.1"]  // whose X-Request-Id is kept
        }
        let openButton = #"<a class="button" href="https://example.com/open">Open Example</a>"#
        // An unknown checkout.
        let missing = try live.get("/checkout/aaaaaaaaaaaaaaaaaaaaaaaaaa", headers: ["X-Request-Id": "support-1234"])
        #expect(missing.status == 404)
        #expect(missing.text.contains(openButton))
        #expect(missing.text.contains(#"<p class="reference">Reference: <span>support-1234</span></p>"#))
        #expect(missing.text.contains("Nothing was charged."))
        // A payment's result or return page this browser cannot match: it may have paid, so it is never told
        // nothing was charged, nor sent to pay again.
        for path in ["/checkout/aaaaaaaaaaaaaaaaaaaaaaaaaa/done?session_id=cs_unknown", "/pay/return"] {
            let unmatched = try live.get(path)
            #expect(unmatched.status == 404, "\(path)")
            #expect(!unmatched.text.contains("Nothing was charged"), "\(path)")
            #expect(unmatched.text.contains("do not pay again"), "\(path)")
        }
        // A tokenless visit where the shop needs the app's link.
        let tokenless = try live.get("/", headers: ["Accept-Language": "de"])
        #expect(tokenless.status == 200)
        #expect(tokenless.text.contains(#"<a class="button" href="https://example.com/open">Example öffnen</a>"#))
        let id = try #require(tokenless.header("X-Request-Id"))
        #expect(tokenless.text.contains("Referenz: <span>\(id)</span>"))
        // A damaged link: plain words, no token jargon.
        let damaged = try live.get("/?externalPurchaseToken=%%%&bundleId=com.example")
        #expect(damaged.status == 400)
        #expect(damaged.text.contains(openButton))
        #expect(damaged.text.contains("The link is damaged"))
        #expect(!damaged.text.lowercased().contains("token"))
        #expect(!damaged.text.contains("Base64"))
        // The seller's footer is on error pages too.
        #expect(damaged.text.contains(#"<a href="mailto:support@example.com">"#))
    }

    @Test func withSeveralAppsAnUnknownCheckoutNamesNone() throws {
        let live = try LiveApplication { configuration in
            var other = configuration.apps[0]
            other.bundleId = "com.example.other"
            other.name = "Other"
            configuration.apps.append(other)
        }
        let missing = try live.get("/checkout/aaaaaaaaaaaaaaaaaaaaaaaaaa")
        #expect(missing.status == 404)
        #expect(!missing.text.contains("Open Example") && !missing.text.contains("Open Other"))
        #expect(missing.text.contains("Reference: <span>"))
        // A link that names its app still leads back to that one.
        let damaged = try live.get("/?externalPurchaseToken=%%%&bundleId=com.example.other")
        #expect(damaged.text.contains("Open Other"))
    }

    @Test func theIconsAreServed() throws {
        let live = try LiveApplication()
        let favicon = try live.get("/favicon.ico")
        #expect(favicon.status == 200)
        #expect(favicon.header("Content-Type") == "image/x-icon")
        #expect(favicon.body.starts(with: [0, 0, 1, 0]))
        let touch = try live.get("/apple-touch-icon.png")
        #expect(touch.status == 200)
        #expect(touch.header("Content-Type") == "image/png")
        #expect(touch.body.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        #expect(favicon.body.count + touch.body.count < 8 * 1024)
    }

    @Test func aConfiguredIconIsShownFromOurOwnHost() throws {
        let live = try LiveApplication { $0.apps[0].icon = "/apple-touch-icon.png" }
        let page = try Self.checkout(live)
        #expect(page.contains(#"<img class="app-icon" src="/apple-touch-icon.png" alt="" width="48" height="48">"#))
        #expect(!page.contains(#"<span class="app-icon""#))
    }

    @Test func theResultIsAGetAfterTheDemoPostAndKeepsThePeriod() throws {
        let harness = try PaymentHarness(provider: .demo)
        let checkout = try harness.openCheckout()
        let chosen = try harness.choose(checkout, product: "pro.monthly", currency: "EUR")
        let payment = try #require(chosen.header("Location"))
        let page = try harness.live.get(payment, headers: ["Cookie": checkout.cookie])
        #expect(page.text.contains("€3.99/month"))
        let csrf = try #require(page.text.firstMatch(of: /name="csrf" value="([a-z2-7]+)"/)?.1)
        let complete = try harness.live.post(
            payment,
            contentType: "application/x-www-form-urlencoded",
            body: "csrf=\(csrf)&action=complete",
            headers: ["Cookie": checkout.cookie]
        )
        // POST → 303 → GET: reloading the result page never posts the form again.
        #expect(complete.status == 303)
        #expect(complete.body.isEmpty)
        let location = try #require(complete.header("Location"))
        #expect(location.hasPrefix("/checkout/\(checkout.id)/done?session_id="))
        let result = try harness.live.get(location, headers: ["Cookie": checkout.cookie])
        #expect(result.status == 200)
        #expect(result.text.contains("<h1>Demo payment completed</h1>"))
        #expect(result.text.contains("This was a demo: nothing was charged."))
        #expect(result.text.contains("Pro monthly</strong> · €3.99/month"))
        let session = String(location.split(separator: "=").last ?? "")
        #expect(result.text.contains("Order reference: <span>\(session)</span>"))
        // The same GET again shows the same page and records nothing more.
        let again = try harness.live.get(location, headers: ["Cookie": checkout.cookie])
        #expect(again.text.contains("<h1>Demo payment completed</h1>"))
        // The same choice posted again leads to that payment's result, never to a second payment.
        let chosenAgain = try harness.choose(checkout, product: "pro.monthly", currency: "EUR")
        #expect(chosenAgain.status == 303 && chosenAgain.header("Location") == location)
        #expect(
            try harness.live.application.ledger.payments.purchases(
                externalPurchaseId: ExternalPurchaseID(checkout.externalPurchaseId)
            )
            .count == 1
        )
    }

    @Test func aPaymentBeingConfirmedSaysSoWithAWayBack() throws {
        let harness = try PaymentHarness(provider: .stripe)
        let checkout = try harness.openCheckout()
        #expect(try harness.choose(checkout, product: "pro.lifetime", currency: "EUR").status == 303)
        // The fake Stripe numbers its sessions.
        let session = "cs_test_fake1"
        // Stripe sends the person back before any webhook: the page waits and says so, with the order reference.
        let waiting = try harness.live.get(
            PaymentResultRoute.path(checkoutId: CheckoutID(checkout.id), sessionId: session),
            headers: ["Cookie": checkout.cookie]
        )
        #expect(waiting.text.contains("Confirming your payment"))
        #expect(waiting.text.contains("Order reference: <span>\(session)</span>"))
        #expect(waiting.text.contains(#"<p class="back"><a href="https://example.com/open">Open Example</a></p>"#))
    }
}
