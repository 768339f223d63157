import Foundation
import Storage

/// A person's data in a stored JSON body (a provider's event, an entitlement event), and the body without it.
/// Kept: every id, amount, currency, date and status, and the country of an address (Apple's `taxCountry`, the
/// developer's accounts). Removed: e-mail addresses, names, phone numbers, tax ids, IP addresses, the lines of
/// addresses, and account tokens.
enum PersonalData {
    /// Keys whose values are a person's wherever they appear: Stripe's and Paddle's names for contact details,
    /// tax ids, addresses' lines, IP addresses, and the app's account token.
    static let personalKeys: Set<String> = Set([
        "email", "customer_email", "customer_email_address", "receipt_email", "name", "customer_name",
        "individual_name", "business_name", "description", "phone", "customer_phone", "tax_id", "tax_ids",
        "customer_tax_ids", "tax_identifier", "ip_address", "customer_purchase_ip", "line1", "line2", "first_line",
        "second_line", "city", "postal_code", "state", "region",
    ]).union(accountKeys)
    /// Keys of the app's account token.
    static let accountKeys: Set<String> = ["appAccountToken", "app_account_token"]
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
    /// whatever key (metadata the developer chose: `metadata.app_user`), case-insensitively. Without them (the
    /// retention pass, which erases everyone's), any text shaped like an e-mail address is, and any text holding
    /// the account token the body names (`appAccountToken`, `app_account_token`).
    static func redact(_ body: String, mentioning people: [String] = []) -> String? {
        transform(body) { value in
            let lowered = people.map { $0.lowercased() }.filter { !$0.isEmpty }
            // The account tokens the body names under their own keys, so the same value elsewhere in it goes too.
            let accounts = texts(in: value, under: accountKeys.contains).filter { $0.count >= 8 && $0 != erased }
            return redact(value, lowered.isEmpty ? .everyone(accounts: accounts) : .people(lowered))
        }
    }

    /// The body with only the texts holding `people` erased, and beside each what names a person under a key of
    /// the same stem (`gift_from_name` next to `gift_from`, `referrer_name` next to `referrer_email`): a body about
    /// someone else that names the person (another customer's metadata giving their address) keeps its own
    /// customer's data (`buyer_email`, `buyer_name` beside `gift_to`).
    static func redactMentions(_ body: String, of people: [String]) -> String? {
        transform(body) { value in erasingMentions(value, of: people.map { $0.lowercased() }.filter { !$0.isEmpty }) }
    }

    /// Whether the body is about the person: their address or account is the whole value of a key that names a
    /// person's data (the customer's e-mail, the token's account), not only text somewhere in it. Only then are
    /// its ids followed: a body that merely names them (another customer's metadata, a Paddle transaction that
    /// carries no address at all) would lead the erasure into that other customer's events.
    static func isAbout(_ body: String, person: String) -> Bool {
        guard let value = try? JSONSerialization.jsonObject(with: Data(body.utf8), options: [.fragmentsAllowed])
        else { return false }
        return texts(in: value, under: isPersonal).contains(person.lowercased())
    }

    /// Whose data `redact` erases beyond the keys that name a person's: the people asked for, or (retention)
    /// everyone's, with the accounts the body names.
    private enum Subject {
        case people([String])
        case everyone(accounts: Set<String>)

        func holds(_ text: String) -> Bool {
            let lowered = text.lowercased()
            switch self {
            case .people(let people): return people.contains(where: lowered.contains)
            case .everyone(let accounts):
                return PersonalData.holdsAnAddress(lowered) || accounts.contains(where: lowered.contains)
            }
        }
    }

    /// Whether some word of the text is shaped like an e-mail address (`local@domain.tld`): no id, amount or date
    /// of a provider's is, nor a URL (`https://cdn.example/pkg@1.2.3/app.js`, `https://medium.com/@brand`, a
    /// user part), which a slash or a colon gives away.
    static func holdsAnAddress(_ text: String) -> Bool {
        text.split(whereSeparator: { $0.isWhitespace || "<>()[],;\"'".contains($0) }).contains { word in
            let parts = word.split(separator: "@", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, !word.contains("/"), !word.contains(":"),
                let dot = parts[1].lastIndex(of: "."), parts[1].startIndex < dot
            else { return false }
            let tld = parts[1][parts[1].index(after: dot)...]
            return tld.count >= 2 && tld.allSatisfy(\.isLetter)
        }
    }

    private static func transform(_ body: String, _ change: (Any) -> Any) -> String? {
        guard let value = try? JSONSerialization.jsonObject(with: Data(body.utf8), options: [.fragmentsAllowed]),
            value is [String: Any] || value is [Any],
            let data = try? JSONSerialization.data(
                withJSONObject: change(value),
                options: [.sortedKeys, .withoutEscapingSlashes]
            )
        else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    private static func erasingMentions(_ value: Any, of people: [String]) -> Any {
        let subject = Subject.people(people)
        if let array = value as? [Any] { return array.map { erasingMentions($0, of: people) } }
        if let text = value as? String { return subject.holds(text) ? erased : text }
        guard let object = value as? [String: Any] else { return value }
        // A key that is all stem (`email`) names nothing beside it.
        let stems = object.compactMap { key, field in
            (field as? String).map(subject.holds) == true ? stem(of: key) : nil
        }.filter { !$0.isEmpty }
        var result: [String: Any] = [:]
        for (key, field) in object {
            let beside = field is String && isPersonal(key) && stems.contains { key.lowercased().hasPrefix($0) }
            result[key] = beside ? erased : erasingMentions(field, of: people)
        }
        return result
    }

    /// A key without what says it holds an address (`referrer_email` → `referrer_`), lowered: the keys of the same
    /// person beside it start so.
    private static func stem(of key: String) -> String {
        var lowered = key.lowercased()
        for end in ["email_address", "email", "address"] where lowered.hasSuffix(end) {
            lowered.removeLast(end.count)
            break
        }
        return lowered
    }

    /// The lowered texts held under the keys `named` picks (a person's data, an account token), at any depth.
    private static func texts(in value: Any, under named: (String) -> Bool) -> Set<String> {
        if let array = value as? [Any] { return array.reduce(into: []) { $0.formUnion(texts(in: $1, under: named)) } }
        guard let object = value as? [String: Any] else { return [] }
        var found: Set<String> = []
        for (key, field) in object {
            if named(key), let text = field as? String {
                found.insert(text.lowercased())
            } else {
                found.formUnion(texts(in: field, under: named))
            }
        }
        return found
    }

    private static func redact(_ value: Any, _ subject: Subject) -> Any {
        if let array = value as? [Any] { return array.map { redact($0, subject) } }
        if let text = value as? String { return subject.holds(text) ? erased : text }
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
                result[key] = redact(field, subject)
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
