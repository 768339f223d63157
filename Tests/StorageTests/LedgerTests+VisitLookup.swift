import Dispatch
import Domain
import Foundation
import Storage
import Testing

/// Migration 29: the visit that recorded a token is found by its time, the token's other visits by its id; a
/// token's page and the money view must still see every one.
extension LedgerTests {
    @Test func aTokensVisitsAreFoundByTimeAndById() throws {
        let folder = TemporaryFolder()
        let ledger = try Self.open(folder)
        defer { ledger.close() }
        _ = try ledger.tokens.recordVisit(Self.visit("a", checkout: "c-a", at: 1_000))
        // Another token and a tokenless visit in the same millisecond.
        _ = try ledger.tokens.recordVisit(Self.visit("b", checkout: "c-b", at: 1_000))
        _ = try ledger.tokens.recordVisit(Self.visit(nil, checkout: "c-none", at: 1_000))
        _ = try ledger.tokens.recordVisit(Self.visit("a", checkout: "c-a", at: 2_000))
        _ = try ledger.tokens.recordVisit(Self.visit("a", checkout: "c-a2", at: 3_000))
        // A token the app forwarded first: no visit recorded it.
        _ = try ledger.tokens.recordForwardedToken(Self.token("f", source: .app), checkoutId: "c-f", at: 500)
        _ = try ledger.tokens.recordVisit(Self.visit("f", checkout: "c-f", at: 4_000))

        let visits = try ledger.tokens.visits(for: "a")
        #expect(visits.map(\.visitedAt) == [1_000, 2_000, 3_000])
        #expect(visits.map(\.checkoutId) == ["c-a", "c-a", "c-a2"])
        #expect(visits.first?.utm == ["utm_source": "newsletter"])
        #expect(try ledger.tokens.visits(for: "b").map(\.visitedAt) == [1_000])
        #expect(try ledger.tokens.visits(for: "f").map(\.visitedAt) == [4_000])
        #expect(try ledger.tokens.visits(for: "a", limit: 2).map(\.visitedAt) == [1_000, 2_000])
        #expect(try ledger.tokens.visits(for: "unknown").isEmpty)
    }

    /// Landings as the server records them (the journal on SQLite, one batch statement on PostgreSQL, where a
    /// token that comes twice goes in a later round): each token's first visit is marked once, and none is lost.
    @Test func landingsOfOneTokenInABatchAreAllFound() throws {
        let folder = TemporaryFolder()
        let ledger = try Self.open(folder)
        defer { ledger.close() }
        let done = DispatchGroup()
        for index in 0..<60 {
            done.enter()
            let token = "t\(index % 3)"
            ledger.recordVisit(Self.visit(token, checkout: "c-\(token)", at: 10_000 + Int64(index))) { error in
                #expect(error == nil)
                done.leave()
            }
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(ledger.flush())
        for token in ["t0", "t1", "t2"] {
            let offset = Int64(token.dropFirst())!
            let expected = stride(from: 10_000 + offset, to: 10_060, by: 3).map { $0 }
            #expect(try ledger.tokens.visits(for: ExternalPurchaseID(token)).map(\.visitedAt) == expected, "\(token)")
        }
    }

    /// A later sighting of a known token under another checkout id (its creation date differed, and ids lead
    /// with it) leads to the token's one checkout: landed (journaled, then in the tables) or forwarded.
    @Test func anotherIdOfAKnownTokenLeadsToItsCheckout() throws {
        let folder = TemporaryFolder()
        let ledger = try Self.open(folder)
        defer { ledger.close() }
        _ = try ledger.tokens.recordVisit(Self.visit("a", checkout: "c-a", at: 1_000))
        let recorded = DispatchSemaphore(value: 0)
        ledger.recordVisit(Self.visit("a", checkout: "c-a-later", at: 2_000)) { error in
            #expect(error == nil)
            recorded.signal()
        }
        #expect(recorded.wait(timeout: .now() + 30) == .success)
        #expect(try ledger.tokens.checkout(id: "c-a-later")?.id == "c-a")
        #expect(ledger.flush())
        #expect(try ledger.tokens.checkout(id: "c-a-later")?.id == "c-a")
        #expect(try ledger.tokens.checkout(id: "c-a-later")?.externalPurchaseId == "a")
        _ = try ledger.tokens.recordForwardedToken(Self.token("a", source: .app), checkoutId: "c-a-app", at: 3_000)
        #expect(try ledger.tokens.checkout(id: "c-a-app")?.id == "c-a")
        #expect(try ledger.tokens.checkout(id: "c-a")?.id == "c-a")
        #expect(try ledger.tokens.checkout(id: "c-unknown") == nil)
        #expect(try ledger.tokens.visits(for: "a").map(\.checkoutId) == ["c-a", "c-a-later"])
    }

    /// A forward of a token whose landing is still only journaled waits for that landing: the landing recorded
    /// the token first, so the token is the landing's, first seen then, with its visit the one that recorded it.
    @Test func aForwardBehindALandingKeepsTheLandingsSighting() throws {
        let folder = TemporaryFolder()
        let ledger = try Self.open(folder)
        defer { ledger.close() }
        let recorded = DispatchSemaphore(value: 0)
        ledger.recordVisit(Self.visit("a", checkout: "c-a", at: 1_000)) { error in
            #expect(error == nil)
            recorded.signal()
        }
        #expect(recorded.wait(timeout: .now() + 30) == .success)
        let outcome = try ledger.tokens.recordForwardedToken(
            Self.token("a", source: .app),
            checkoutId: "c-a",
            at: 2_000
        )
        #expect(!outcome.isNewToken)
        let token = try #require(try ledger.tokens.token("a"))
        #expect(token.source == .url)
        #expect(token.firstSeenAt == 1_000)
        #expect(try ledger.tokens.visits(for: "a").map(\.visitedAt) == [1_000])
    }
}
