import Foundation
import Storage

/// A person's data in a stored JSON body (a provider's event, an entitlement event), and the body without it.
/// Kept: every id, amount, currency, date and status, and the country of an address (Apple's `taxCountry`, the
/// developer's accounts). Removed: e-mail addresses, names, phone numbers, tax ids, IP addresses, the lines of
/// addresses, and account tokens.
enum PersonalData {
    /// Keys whose values are a person's wherever they appear: Stripe's and Paddle's names for contact details,
    /// tax ids, addresses' lines, IP addresses, and the app's account token.
    static let personalKeys: Set<String> = [
        "email", "customer_email", "customer_email_address", "receipt_email", "name", "customer_name",
        "individual_name", "business_name", "description", "phone", "customer_phone", "tax_id", "tax_ids",
        "customer_tax_ids", "tax_identifier", "ip_address", "customer_purchase_ip", "line1", "line2", "first_line",
        "second_line", "city", "postal_code", "state", "region", "appAccountToken", "app_account_token",
    ]
    /// Ends of keys whose values are a person's under any provider's prefix (`payer_email`, `verified_email`,
    /// `payer_name`, `verified_name` of Stripe's PayPal, iDEAL and other payment method details), lowered.
    static let personalKeyEnds = ["email", "_name", "phone"]
    /// Keys whose values are what the person typed at checkout (Stripe's custom fields): erased whole.
    static let enteredKeys: Set<String> = ["custom_fields"]
    /// Keys whose values are addresses: only the country stays (and a written-out address is erased whole).
    static let addressKeys: Set<String> = ["address", "billing_address", "shipping_address", "customer_address"]
    static let addressKeep: Set<String> = ["country", "country_code"]
    /// What an erased value reads as.
    static let erased = PrivacyStore.erased

    /// The body with the person's data replaced; nil when it is not a JSON object or array. `people`: what the
    /// erasure was asked for (an e-mail address, an account token): any text holding it is erased too, under
    /// whatever key (metadata the developer chose: `metadata.app_user`), case-insensitively.
    static func redact(_ body: String, mentioning people: [String] = []) -> String? {
        let lowered = people.map { $0.lowercased() }.filter { !$0.isEmpty }
        guard let value = try? JSONSerialization.jsonObject(with: Data(body.utf8), options: [.fragmentsAllowed]),
            value is [String: Any] || value is [Any],
            let data = try? JSONSerialization.data(
                withJSONObject: redact(value, lowered),
                options: [.sortedKeys, .withoutEscapingSlashes]
            )
        else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    private static func redact(_ value: Any, _ people: [String]) -> Any {
        if let array = value as? [Any] { return array.map { redact($0, people) } }
        if let text = value as? String {
            let lowered = text.lowercased()
            return people.contains(where: lowered.contains) ? erased : text
        }
        guard let object = value as? [String: Any] else { return value }
        var result: [String: Any] = [:]
        for (key, field) in object {
            if isPersonal(key) {
                result[key] = field is NSNull ? field : erased
            } else if addressKeys.contains(key), let address = field as? [String: Any] {
                result[key] = address.filter { addressKeep.contains($0.key) }
            } else if addressKeys.contains(key), field is String {
                result[key] = erased
            } else {
                result[key] = redact(field, people)
            }
        }
        return result
    }

    /// Whether `key`'s value is a person's wherever it appears.
    static func isPersonal(_ key: String) -> Bool {
        let lowered = key.lowercased()
        return personalKeys.contains(key) || enteredKeys.contains(key)
            || personalKeyEnds.contains(where: lowered.hasSuffix)
    }

    /// The provider's ids of the person and of their payments in a body (Stripe customers `cus_`, payment
    /// intents `pi_` and charges `ch_`; Paddle customers `ctm_` and transactions `txn_`): the person's other
    /// events (a refund, a dispute, a guest's later charge) carry them even when they do not carry the e-mail
    /// address.
    static func linkedIds(in body: String) -> Set<String> {
        Set(
            body.matches(of: /"((?:cus|pi|ch)_[A-Za-z0-9]{6,64}|(?:ctm|txn)_[a-z0-9]{6,64})"/).map {
                String($0.output.1)
            }
        )
    }
}
