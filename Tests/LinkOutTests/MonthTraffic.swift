import Foundation

/// A month of customers for the reporting simulation, as timed events: tokens arriving (StoreKit link-out and
/// custom-link tokens, duplicates among them), one-time buys, subscriptions renewing every week, refunds. Seeded,
/// so a run can be repeated. A new kind of traffic is one more `Customer` case and its events.
struct MonthTraffic {
    enum Customer: CaseIterable {
        /// Lands and leaves: the token is reported `NO_LINE_ITEM`.
        case browses
        /// Buys once.
        case buysOnce
        /// Buys, then gets a refund (or a chargeback) some days later.
        case buysThenRefund
        /// Subscribes weekly; each renewal references the start.
        case subscribes
        /// Comes through a custom link (`ACQUISITION`, a year long), sometimes twice (a duplicate token).
        case customLink

        /// Shares of all customers, in percent.
        var weight: Int {
            switch self {
            case .browses: 55
            case .buysOnce: 20
            case .buysThenRefund: 5
            case .subscribes: 10
            case .customLink: 10
            }
        }
    }

    struct Token {
        var id: String
        var created: Int64
        var type: String?
        var expires: Int64?
        var account: String?
    }

    enum Event {
        case token(Token)
        case lineItem(tokenId: String, lineItemId: String, body: String)
    }

    /// Events in time order.
    var events: [(at: Int64, event: Event)] = []
    var random: SplitMix64

    static let day: Int64 = 86_400_000

    init(tokens: Int, start: Int64, days: Int, seed: UInt64) {
        random = SplitMix64(seed: seed)
        for index in 0..<tokens {
            let created = start + Int64(random.next() % UInt64(Int64(days) * Self.day))
            add(customer: pick(), index: index, created: created, end: start + Int64(days) * Self.day)
        }
        events.sort { $0.at < $1.at }
    }

    private mutating func pick() -> Customer {
        var roll = Int(random.next() % 100)
        for customer in Customer.allCases {
            if roll < customer.weight { return customer }
            roll -= customer.weight
        }
        return .browses
    }

    private mutating func add(customer: Customer, index: Int, created: Int64, end: Int64) {
        let id = "sim-\(index)-\(UUID().uuidString.lowercased())"
        let bought = created + Int64(random.next() % UInt64(6 * 3_600_000))
        switch customer {
        case .browses:
            events.append((created, .token(Token(id: id, created: created))))
        case .buysOnce:
            events.append((created, .token(Token(id: id, created: created))))
            let item = Self.newId()
            events.append((bought, .lineItem(tokenId: id, lineItemId: item, body: Self.buy(item, at: bought))))
        case .buysThenRefund:
            events.append((created, .token(Token(id: id, created: created))))
            let item = Self.newId()
            events.append((bought, .lineItem(tokenId: id, lineItemId: item, body: Self.buy(item, at: bought))))
            let refunded = bought + Self.day * Int64(1 + random.next() % 5)
            guard refunded < end else { return }
            let refund = Self.newId()
            let body = Self.refund(refund, of: item, at: refunded)
            events.append((refunded, .lineItem(tokenId: id, lineItemId: refund, body: body)))
        case .subscribes:
            events.append((created, .token(Token(id: id, created: created))))
            let start = Self.newId()
            let week = 7 * Self.day
            events.append(
                (bought, .lineItem(tokenId: id, lineItemId: start, body: Self.subscription(start, at: bought)))
            )
            var renewal = bought + week
            var paidDays: Int32 = 7
            while renewal < end {
                let item = Self.newId()
                let body = Self.subscription(item, at: renewal, start: start, paidDays: paidDays)
                events.append((renewal, .lineItem(tokenId: id, lineItemId: item, body: body)))
                renewal += week
                paidDays += 7
            }
        case .customLink:
            let account = UUID().uuidString.lowercased()
            let token = Token(
                id: id,
                created: created,
                type: "ACQUISITION",
                expires: created + 365 * Self.day,
                account: account
            )
            events.append((created, .token(token)))
            if random.next() % 4 == 0 {
                let item = Self.newId()
                events.append((bought, .lineItem(tokenId: id, lineItemId: item, body: Self.buy(item, at: bought))))
            }
            if random.next() % 5 == 0 {
                // The same customer's token again (a refreshed or second token of the period): DUPLICATE_TOKEN.
                let again = created + Self.day
                var duplicate = token
                (duplicate.id, duplicate.created) = ("sim-\(index)-dup-\(UUID().uuidString.lowercased())", again)
                events.append((again, .token(duplicate)))
            }
        }
    }

    static func newId() -> String { UUID().uuidString.lowercased() }

    /// A one-time buy of €9.99 including 20% tax, in milli-units.
    static func buy(_ id: String, at: Int64) -> String {
        """
        {"lineItemId":"\(id)","creationDate":\(at),"eventType":"BUY","productType":"ONE_TIME_BUY",\
        "productIdentifier":"pro.lifetime","quantity":1,"amountTaxInclusive":9990,"amountTaxExclusive":8325,\
        "taxAmount":1665,"netAmountTaxExclusive":8325,"pricingCurrency":"EUR","reportingCurrency":"EUR",\
        "taxCountry":"DEU"}
        """
    }

    /// The full refund of `buy`.
    static func refund(_ id: String, of buy: String, at: Int64) -> String {
        """
        {"lineItemId":"\(id)","creationDate":\(at),"eventType":"REFUND","referenceLineItemId":"\(buy)",\
        "amountTaxInclusive":9990,"amountTaxExclusive":8325,"taxAmount":1665,"netAmountTaxExclusive":0,\
        "pricingCurrency":"EUR","reportingCurrency":"EUR","taxCountry":"DEU"}
        """
    }

    /// A weekly subscription of €2.99 including 20% tax: the start (no `start`) or a renewal of it.
    static func subscription(_ id: String, at: Int64, start: String? = nil, paidDays: Int32 = 0) -> String {
        let reference = start.map { #","referenceLineItemId":"\#($0)""# } ?? ""
        return """
            {"lineItemId":"\(id)","creationDate":\(at),"eventType":"BUY","productType":"SUBSCRIPTION",\
            "productIdentifier":"pro.weekly","quantity":1,"amountTaxInclusive":2990,"amountTaxExclusive":2492,\
            "taxAmount":498,"netAmountTaxExclusive":2492,"pricingCurrency":"EUR","reportingCurrency":"EUR",\
            "taxCountry":"DEU","subscriptionEvent":"\(start == nil ? "SUBSCRIPTION_START" : "RENEWAL")",\
            "subscriptionStartDate":\(at),"subscriptionEndDate":\(at + 7 * day),\
            "subscriptionDaysOfPaidService":\(paidDays)\(reference)}
            """
    }
}

/// A small seeded generator (SplitMix64), so a simulated month can be played again.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
