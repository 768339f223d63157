import Domain
import Foundation
import TestSupport
import Testing

@testable import Storage

/// The planner checks unexpired custom-link tokens for duplicates a window at a time: a pass reads what is due
/// and the window, never every custom-link token, and a duplicate far in the order is found once the window
/// reaches it.
@Suite("Duplicate window")
struct DuplicateWindowTests {
    static let created: Int64 = 1_706_169_600_000
    static let now = created + Milliseconds.days(30)

    static func customLink(_ id: String, created: Int64, expires: Int64) -> TokenFields {
        TokenFields(
            ExternalPurchaseToken(
                appAppleId: 1_234_567_890,
                bundleId: "com.example",
                tokenCreationDate: created,
                externalPurchaseId: ExternalPurchaseID(id),
                tokenType: "ACQUISITION",
                tokenExpirationDate: expires
            ),
            source: .url
        )
    }

    /// How many tokens the planner's query considers at all (before the rest of its condition).
    static func candidates(_ ledger: Ledger, window: DuplicateWindow) throws -> Int64 {
        try ledger.database.readers.read { connection throws(StorageError) in
            try connection.query(
                "SELECT count(*) FROM (\(ReportStore.needingReportsCandidates)) AS candidates",
                [.integer(now - Milliseconds.days(2)), .integer(now)] + window.parameters
            ).first?[0].integer ?? -1
        }
    }

    static func due(_ ledger: Ledger, window: DuplicateWindow) throws -> [String] {
        try ledger.reports.tokensNeedingReports(
            now: now,
            quietSince: now - Milliseconds.days(2),
            paymentsOpenSince: now - Milliseconds.day,
            paymentsPendingSince: now - Milliseconds.days(7),
            holdsEndForTokensCreatedBefore: now - Milliseconds.days(9),
            duplicateWindow: window,
            limit: 100
        ).map(\.token.externalPurchaseId.rawValue)
    }

    @Test func aDuplicateFarInTheOrderIsFoundOnceTheWindowReachesIt() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try LedgerTests.open(folder)
        defer { ledger.close() }
        let created = Self.created
        let year = created + Milliseconds.days(365)
        // Three expired (due every pass), twenty unexpired, then a refreshed copy pair: the later seen of
        // "y" and "z" (same creation and expiry) is the duplicate, last in the window's order.
        for index in 0..<3 {
            let token = Self.customLink(
                "e\(index)",
                created: created - Int64(index),
                expires: created + Milliseconds.day
            )
            _ = try ledger.tokens.recordForwardedToken(token, checkoutId: "c-e\(index)", at: created)
        }
        for index in 0..<20 {
            let id = String(format: "u%02d", index)
            let token = Self.customLink(id, created: created + Int64(index) * Milliseconds.minute, expires: year)
            _ = try ledger.tokens.recordForwardedToken(token, checkoutId: "c-\(id)", at: created)
        }
        let last = created + Milliseconds.day
        _ = try ledger.tokens.recordForwardedToken(
            Self.customLink("y", created: last, expires: year),
            checkoutId: "c-y",
            at: last
        )
        _ = try ledger.tokens.recordForwardedToken(
            Self.customLink("z", created: last, expires: year),
            checkoutId: "c-z",
            at: last + 1
        )
        #expect(try ledger.reports.isDuplicateToken("z"))

        let size = 4
        var cursor: CustomLinkKey?
        var foundAt: Int?
        for pass in 1...10 {
            let window = try ledger.reports.duplicateWindow(after: cursor, size: size)
            #expect(try Self.candidates(ledger, window: window) <= Int64(3 + size))
            let due = try Self.due(ledger, window: window)
            #expect(Set(["e0", "e1", "e2"]).isSubset(of: Set(due)), "pass \(pass): \(due)")
            #expect(!due.contains("y"))
            #expect(due.count <= 3 + 1)
            if due.contains("z") {
                foundAt = pass
                // The last window is not full: the next starts at the start again.
                #expect(window.next == nil)
                break
            }
            cursor = window.next
        }
        // 25 custom-link tokens in windows of 4: "z" is the only one of the seventh.
        #expect(foundAt == 7)
        #expect(try ledger.reports.duplicateWindow(after: nil, size: size).after == nil)
    }

    @Test func aWindowAfterTheLastTokenStartsAtTheStartAgain() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try LedgerTests.open(folder)
        defer { ledger.close() }
        let created = Self.created
        let year = created + Milliseconds.days(365)
        for id in ["a", "b"] {
            _ = try ledger.tokens.recordForwardedToken(
                Self.customLink(id, created: created, expires: year),
                checkoutId: "c-\(id)",
                at: created
            )
        }
        let past = CustomLinkKey(createdAt: created + 1, externalPurchaseId: "")
        let window = try ledger.reports.duplicateWindow(after: past, size: 10)
        #expect(window.after == nil)
        #expect(window.through == CustomLinkKey(createdAt: created, externalPurchaseId: "b"))
        #expect(!window.isFull)
        // "b", seen with "a" but after it by key, is the duplicate of the pair.
        #expect(try Self.due(ledger, window: window) == ["b"])
        #expect(try Self.due(ledger, window: .empty).isEmpty)
    }

    /// A token of a customer one of whose line items is held for a token is not judged a duplicate while the item
    /// waits: the next pass may place the item on it, which makes it the token that carries transactions. A pass
    /// already planning when the app forwarded the token reported it `DUPLICATE_TOKEN`, and the held item could then
    /// never go on it.
    @Test func aTokenThatMayCarryAHeldItemIsNotJudgedADuplicate() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try LedgerTests.open(folder)
        defer { ledger.close() }
        let account = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        let created = Self.created
        let first = TokenFields(
            Self.customLink("bought-on", created: created, expires: created + Milliseconds.hour).token,
            source: .app,
            appAccountToken: account
        )
        _ = try ledger.tokens.recordForwardedToken(first, checkoutId: "c-bought-on", at: created)
        try ledger.reports.storeLineItems([("buy", #"{"lineItemId":"buy"}"#)], for: "bought-on", at: created)
        // Forwarded later, active from the moment the first expires: the two touch, so the later is its duplicate.
        let later = created + Milliseconds.hour
        let second = TokenFields(
            Self.customLink("forwarded", created: later, expires: created + Milliseconds.days(365)).token,
            source: .app,
            appAccountToken: account
        )
        _ = try ledger.tokens.recordForwardedToken(second, checkoutId: "c-forwarded", at: later)
        #expect(try ledger.reports.isDuplicateToken("forwarded"))
        // A renewal of the customer's, paid after the first expired, waits for a token: the second is not judged.
        var change = PaymentChange(event: nil, outcome: "renewal recorded", at: later + Milliseconds.hour)
        change.lineItemsAwaitingToken = [("bought-on", "in_2", #"{"lineItemId":"in_2"}"#)]
        try ledger.payments.apply(change)
        #expect(try !ledger.reports.isDuplicateToken("forwarded"))
        // Placed elsewhere (or on it), nothing is held any more and the judgement is made as before.
        let held = try #require(try ledger.reports.lineItemsAwaitingToken(limit: 1).first)
        #expect(try ledger.reports.placeLineItemAwaitingToken(held.rowId, on: "bought-on"))
        #expect(try ledger.reports.isDuplicateToken("forwarded"))
    }

    /// An item held because it falls between two of the customer's tokens can go on neither (Apple refuses an item
    /// dated outside its token's active range), so it does not keep the customer's later tokens from being judged:
    /// a third token, overlapping the second and seen after it, is its duplicate. An item dated in a token's range
    /// still holds that token's judgement.
    @Test func anItemHeldOutsideATokensRangeDoesNotHoldItsJudgement() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try LedgerTests.open(folder)
        defer { ledger.close() }
        let account = "0b7c4a52-8f5e-4f43-9d41-3f0d3c7a6a11"
        let created = Self.created
        let year = created + Milliseconds.days(365)
        func forward(_ id: String, from start: Int64, until end: Int64) throws {
            let fields = TokenFields(
                Self.customLink(id, created: start, expires: end).token,
                source: .app,
                appAccountToken: account
            )
            _ = try ledger.tokens.recordForwardedToken(fields, checkoutId: CheckoutID("c-\(id)"), at: start)
        }
        try forward("bought-on", from: created, until: created + Milliseconds.hour)
        try ledger.reports.storeLineItems([("buy", #"{"lineItemId":"buy"}"#)], for: "bought-on", at: created)
        try forward("second", from: created + 2 * Milliseconds.hour, until: year)
        try forward("third", from: created + 3 * Milliseconds.hour, until: year)
        // A renewal dated between the first token's expiry and the second's creation: no token can carry it.
        let between = created + 90 * Milliseconds.minute
        var change = PaymentChange(event: nil, outcome: "renewal recorded", at: between)
        change.lineItemsAwaitingToken = [("bought-on", "in_2", #"{"lineItemId":"in_2","creationDate":\#(between)}"#)]
        try ledger.payments.apply(change)
        // Not dated yet, it may fall anywhere: the judgement waits.
        #expect(try !ledger.reports.isDuplicateToken("third"))
        #expect(try ledger.monthlyClose.dateLineItems(limit: 10) == 2)  // the buy and the renewal
        #expect(try ledger.reports.isDuplicateToken("third"))
        #expect(try !ledger.reports.isDuplicateToken("second"))
        // A later renewal dated in the third token's range holds its judgement again.
        var later = PaymentChange(event: nil, outcome: "renewal recorded", at: created + 4 * Milliseconds.hour)
        let inRange = created + 4 * Milliseconds.hour
        later.lineItemsAwaitingToken = [("bought-on", "in_3", #"{"lineItemId":"in_3","creationDate":\#(inRange)}"#)]
        try ledger.payments.apply(later)
        #expect(try ledger.monthlyClose.dateLineItems(limit: 10) == 1)
        #expect(try !ledger.reports.isDuplicateToken("third"))
    }

    /// A token with a payment under way is no duplicate of a sibling merely seen first (paid, it carries the
    /// customer's transactions), but stays one of a sibling that has line items; and once the token expires, or
    /// the session is older than the payment window, it is judged as before.
    @Test func aPaymentUnderWayKeepsATokenFromBeingTheDuplicateOfOneSeenFirst() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try LedgerTests.open(folder)
        defer { ledger.close() }
        let created = Self.created
        let expires = created + Milliseconds.hour
        for (id, seen) in [("seen-first", created), ("paid-on", created + 1000)] {
            let fields = TokenFields(Self.customLink(id, created: created, expires: expires).token, source: .url)
            _ = try ledger.tokens.recordForwardedToken(fields, checkoutId: CheckoutID("c-" + id), at: seen)
        }
        let opened = created + 2000
        _ = try ledger.payments.recordPaymentSession(
            PaymentSessionRecord(
                sessionId: "cs_1",
                provider: "stripe",
                intentId: "intent-1",
                checkoutId: "c-paid-on",
                externalPurchaseId: "paid-on",
                productId: "pro.monthly",
                currency: "EUR",
                amount: "3.99",
                language: "en",
                url: "https://checkout.example/cs_1",
                state: .open,
                createdAt: opened,
                updatedAt: opened
            )
        )
        let paying = PaymentsUnderWay(now: opened + 1000, openSince: opened - 1000, pendingSince: opened - 1000)
        #expect(try ledger.reports.isDuplicateToken("paid-on"))
        #expect(try !ledger.reports.isDuplicateToken("paid-on", paying: paying))
        // Past the payment window, or past the token's expiry, it is the duplicate again.
        #expect(
            try ledger.reports.isDuplicateToken(
                "paid-on",
                paying: .init(now: opened, openSince: opened, pendingSince: opened)
            )
        )
        #expect(
            try ledger.reports.isDuplicateToken("paid-on", paying: .init(now: expires, openSince: 0, pendingSince: 0))
        )
        // A sibling with line items is the one transactions go on, payment or not.
        try ledger.reports.storeLineItems([("buy", #"{"lineItemId":"buy"}"#)], for: "seen-first", at: opened)
        #expect(try ledger.reports.isDuplicateToken("paid-on", paying: paying))
    }
}
