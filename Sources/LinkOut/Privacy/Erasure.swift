import Foundation
package import Lifecycle
package import Storage

/// `linkout erase --email|--account-token`: a person's data taken out of the ledger, everything Apple's reporting
/// and the developer's accounts need kept (ids, amounts, dates, country, the reports themselves). Found by the
/// e-mail address or account token in stored bodies, then by the provider's customer ids and the purchases they
/// lead to; recorded in the audit trail under a fingerprint of what was asked for, never the value itself.
package struct Erasure: Sendable {
    package struct Summary: Sendable, Equatable {
        /// Stored bodies rewritten without the person's data.
        package var bodies: Int
        /// Customer credentials that lost the account token.
        package var credentials: Int
        /// Visits whose link carried the address or account as a campaign value (`utm_*`).
        package var visits: Int = 0
        /// An account token no token or credential named (mistyped?): marked erased all the same.
        package var unknownAccount = false
        /// Why the ledger's free pages could not be zeroed (`PrivacyStore.zeroFreePages`), when they could not:
        /// the rows are rewritten and the erasure recorded all the same.
        package var freePagesLeft: String?
    }

    let ledger: Ledger
    let clock: Clock
    /// Bodies one search returns at most, and ids linked from them searched at most beyond the keys asked for (a
    /// chain of ids never runs through the whole ledger); tests make them small.
    let searchLimit: Int
    let linkedIdLimit: Int

    package init(ledger: Ledger, clock: Clock = .system, searchLimit: Int = 10_000, linkedIdLimit: Int = 1_000) {
        self.ledger = ledger
        self.clock = clock
        self.searchLimit = searchLimit
        self.linkedIdLimit = linkedIdLimit
    }

    package func erase(email: String) throws -> Summary {
        // Searched as given: the ledger lowers both sides alike (`PrivacyStore.bodies(mentioning:)`). An erasure
        // of the address run before left no body holding it: the ids it followed lead to what came since (a
        // dispute, a charge, a Paddle transaction carry only the provider's ids).
        let subject = try AuditFingerprint(ledger: ledger)(email.lowercased())
        let followedBefore = try ledger.privacy.linkedIds(ofErased: subject)
        var summary = try eraseBodies(mentioning: [email] + followedBefore, person: email, keepingFollowedAs: subject)
        summary.visits = try ledger.privacy.eraseCampaignValues(email)
        try audit("email:" + subject, summary)
        summary.freePagesLeft = zeroFreePages()
        return summary
    }

    package func erase(accountToken: String) throws -> Summary {
        let account = accountToken.lowercased()
        // The purchases made on tokens of the account lead to the provider's events about them.
        let purchases = try ledger.payments.purchases(appAccountToken: account)
        let keys = [account] + purchases.flatMap { [$0.purchaseId] + ($0.subscriptionId.map { [$0] } ?? []) }
        // The token keeps its account (Apple's reporting places renewals by it): events made from now on for its
        // purchases name the account as erased instead. Marked first, so an event the server makes while the
        // bodies are rewritten does not bring the token back.
        let known = try ledger.privacy.isKnown(appAccountToken: account)
        let identifiers = Identifiers(secret: try ledger.settings.secret(named: "identifiers"))
        try ledger.privacy.markErased(accountKey: identifiers.erasedAccountKey(account), at: clock.nowMilliseconds())
        var summary = try eraseBodies(mentioning: keys, person: account)
        summary.credentials = try ledger.privacy.unbindCredentials(appAccountToken: account)
        summary.visits = try ledger.privacy.eraseCampaignValues(account)
        summary.unknownAccount = !known
        try audit("account:" + AuditFingerprint(ledger: ledger)(account), summary)
        summary.freePagesLeft = zeroFreePages()
        return summary
    }

    /// Every body that mentions one of `keys` or a customer id found in those, rewritten (`person` erased from
    /// any text of it); with `subject`, the ids followed beyond `keys` are kept under it before the bodies that led
    /// to them lose what found them (an erasure stopped between the two left no way back). A search returns at most
    /// `searchLimit` bodies: when one was cut there, another round finds the rest, since those rewritten no longer
    /// hold the address or account.
    private func eraseBodies(mentioning keys: [String], person: String, keepingFollowedAs subject: String? = nil)
        throws -> Summary
    {
        var rewritten = 0
        for _ in 0..<Self.maxRounds {
            let round = try eraseRound(mentioning: keys, person: person, keepingFollowedAs: subject)
            rewritten += round.rewritten
            if !round.cut || round.rewritten == 0 { break }
        }
        return Summary(bodies: rewritten, credentials: 0)
    }

    /// Rounds of `eraseBodies` at most: with 10,000 bodies a search, a million of one person's.
    static let maxRounds = 100

    /// One round: how many bodies it rewrote, and whether a search was cut at `searchLimit` (so more may wait).
    /// A body is the person's when it holds their address or account as a person's data (`PersonalData.isAbout`),
    /// or was found by one of their purchases or of the provider's ids found in such a body: it loses every
    /// person's data in it, and its ids are followed. A body that only mentions them (another customer's metadata
    /// giving their address) loses only that mention and what names a person beside it under the same stem: its
    /// own customer's data and ids stay.
    private func eraseRound(mentioning keys: [String], person: String, keepingFollowedAs subject: String?) throws
        -> (rewritten: Int, cut: Bool)
    {
        var found: [StoredBody.Kind: (body: StoredBody, isTheirs: Bool)] = [:]
        var cut = false
        var searched: Set<String> = []
        // In the order found: the address or account asked for first, then its purchases, then linked ids.
        var pending = keys
        var next = 0
        while next < pending.count {
            let key = pending[next]
            next += 1
            guard searched.insert(key).inserted, searched.count <= keys.count + linkedIdLimit else { continue }
            let bodies = try ledger.privacy.bodies(mentioning: key, limit: searchLimit)
            cut = cut || bodies.count >= searchLimit
            for stored in bodies where found[stored.kind]?.isTheirs != true {
                let isTheirs = key != person || PersonalData.isAbout(stored.body, person: person)
                found[stored.kind] = (stored, isTheirs)
                if isTheirs { pending += PersonalData.linkedIds(in: stored.body).filter { !searched.contains($0) } }
            }
        }
        if let subject { try ledger.privacy.rememberLinkedIds(searched.subtracting(keys).sorted(), ofErased: subject) }
        let rewritten = found.values.compactMap { stored, isTheirs -> StoredBody? in
            let redacted =
                isTheirs
                ? PersonalData.redact(stored.body, mentioning: [person])
                : PersonalData.redactMentions(stored.body, of: [person])
            // A body already without the person's data (an erasure run again finds it by the ids it keeps) is
            // not written, nor counted, again.
            guard let redacted, redacted != stored.body else { return nil }
            return StoredBody(kind: stored.kind, body: redacted)
        }
        try ledger.privacy.replace(rewritten, at: clock.nowMilliseconds())
        return (rewritten.count, cut)
    }

    /// Zeroes the ledger's free pages, after the erasure is recorded: a failure (a full disk) leaves the rows
    /// rewritten and the entry written, and is said. Nil when done.
    private func zeroFreePages() -> String? {
        do {
            try ledger.privacy.zeroFreePages()
            return nil
        } catch {
            return "\(error)"
        }
    }

    private func audit(_ subject: String, _ summary: Summary) throws {
        try CommandAudit.record(
            ledger,
            action: "privacy.erase",
            subject: subject,
            after: "\(summary.bodies) stored bodies rewritten, \(summary.credentials) credentials unbound, "
                + "\(summary.visits) visits' campaign values erased"
        )
    }
}
