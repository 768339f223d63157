import Domain
import Lifecycle
import Synchronization

/// Landing visits on PostgreSQL: a thread of its own takes every visit queued since its last commit and sends
/// them as one statement (`batchSQL`), committed together: one round trip and one WAL flush for the batch.
/// Statement by statement (as `GroupCommitWriter` runs jobs) a visit would cost three round trips, and the
/// writer would spend its time waiting for the network instead of the disk.
final class PostgresVisitWriter: Sendable {
    typealias Completion = @Sendable (Result<RecordOutcome, StorageError>) -> Void
    struct Entry: Sendable {
        let visit: Visit
        let completion: Completion
    }

    /// Most visits in one batch: bounds what a backlog adds to the first visit's wait, and what either side
    /// buffers before the other reads (a blocking pipeline must not fill both sockets).
    static let maxBatch = 256

    /// One batch in flight: the next waits out the previous one's commit (its round trip and WAL flush), and under
    /// full load a quarter of the machine stood idle. Two connections taking batches from one queue took about 10%
    /// more landings, but the PostgreSQL test pass then failed about one run in three on held renewals (the token
    /// the app forwarded for one was reported without it, and it stayed held), where one connection passed every
    /// run: a second waits until that is understood. A batch locks its tokens in id order, then its `token_days`
    /// rows in key order, as every instance does, so instances do not deadlock one another (a deadlock with
    /// another kind of writer is retried once: `StorageError.isLostToAnotherWriter`); leaving the day's row out of
    /// the batch changed nothing measurable, so that row does not serialise writers.
    private let connection: Mutex<PostgresConnection>
    private let commits = Atomic<Int>(0)
    /// Set once in `init`, after `connection` (the queue's thread needs `self`).
    private let queue = Mutex<BatchQueue<Entry>?>(nil)

    init(connection: sending PostgresConnection) {
        self.connection = Mutex(connection)
        let queue = BatchQueue<Entry>(name: "linkout-visit-writer", maxBatch: Self.maxBatch) { [self] batch in
            commit(batch)
        }
        self.queue.withLock { $0 = queue }
    }

    /// Transactions committed so far (a batch counts once).
    var commitCount: Int { commits.load(ordering: .relaxed) }

    func submit(_ visit: Visit, completion: @escaping Completion) {
        guard queue.withLock({ $0 })?.submit(Entry(visit: visit, completion: completion)) == true else {
            return completion(.failure(StorageError(.closed, "the ledger is closed")))
        }
    }

    /// Commits what is queued, then stops the thread.
    func stop() {
        // Taken out, not just stopped: the queue's thread holds this writer, so keeping the queue would keep
        // both (and the connection, a server session on PostgreSQL) alive after the ledger is closed.
        queue.withLock { queue in
            defer { queue = nil }
            return queue
        }?.stop()
    }

    /// The batch in one statement, or, when a token comes more than once (`ON CONFLICT DO UPDATE` touches a row
    /// once per statement), one statement per round of distinct tokens, pipelined into one transaction; never
    /// repeated after a lost session (the commit may have happened), sent once more when PostgreSQL rolled it
    /// back to break a deadlock. Rows are locked in token order, then the days' rows in key order, so two
    /// instances' batches cannot deadlock. If the batch fails on what a visit carried (SQLSTATE classes 22 and
    /// 23), each visit goes again on its own, so one bad visit never fails its neighbours; any other failure
    /// (the database gone, a timeout) fails the batch at once instead of paying it once per visit.
    private func commit(_ arrived: [Entry]) {
        let batch = arrived.sorted {
            ($0.visit.token?.token.externalPurchaseId ?? "") < ($1.visit.token?.token.externalPurchaseId ?? "")
        }
        let visits = batch.map(\.visit)
        connection.withLock { connection in
            do throws(StorageError) {
                let rounds = Self.rounds(visits)
                let statements = rounds.map { round in (Self.batchSQL, Self.batchParameters(round.map { visits[$0] })) }
                let results: [[[SQLValue]]]
                do throws(StorageError) {
                    results = try Self.send(statements, on: connection)
                } catch let error where error.isLostToAnotherWriter {
                    // PostgreSQL chose this batch to break a deadlock with another writer (a job of the ledger's
                    // writer, another instance): it rolled the batch back and said so, so sending it again is safe.
                    results = try Self.send(statements, on: connection)
                }
                var outcomes: [Int: RecordOutcome] = [:]
                for (round, rows) in zip(rounds, results) {
                    for (index, outcome) in zip(round, Self.outcomes(round.map { visits[$0] }, rows)) {
                        outcomes[index] = outcome
                    }
                }
                commits.add(1, ordering: .relaxed)
                for (index, entry) in batch.enumerated() {
                    entry.completion(
                        outcomes[index].map { .success($0) } ?? .failure(StorageError(.notFound, "no outcome"))
                    )
                }
            } catch {
                guard batch.count > 1, Self.isAboutTheData(error) else {
                    for entry in batch { entry.completion(.failure(error)) }
                    return
                }
                for entry in batch {
                    do throws(StorageError) {
                        let rows = try connection.queryOnce(Self.batchSQL, Self.batchParameters([entry.visit]))
                        commits.add(1, ordering: .relaxed)
                        entry.completion(.success(Self.outcomes([entry.visit], rows)[0]))
                    } catch {
                        entry.completion(.failure(error))
                    }
                }
            }
        }
    }

    /// The batch's indices in rounds within which no token comes twice, in arrival order: a token's second
    /// visit goes in the round after its first.
    static func rounds(_ visits: [Visit]) -> [[Int]] {
        var rounds: [[Int]] = []
        var tokens: [Set<ExternalPurchaseID>] = []
        for (index, visit) in visits.enumerated() {
            var round = 0
            if let id = visit.token?.token.externalPurchaseId {
                while round < tokens.count && tokens[round].contains(id) { round += 1 }
            }
            if round == rounds.count {
                rounds.append([])
                tokens.append([])
            }
            rounds[round].append(index)
            if let id = visit.token?.token.externalPurchaseId { tokens[round].insert(id) }
        }
        return rounds
    }

    /// The batch's statements in one round trip and one transaction (a batch of one statement as it is).
    private static func send(_ statements: [(String, [SQLValue])], on connection: PostgresConnection)
        throws(StorageError) -> [[[SQLValue]]]
    {
        statements.count == 1
            ? [try connection.queryOnce(statements[0].0, statements[0].1)]
            : try connection.pipelined(statements)
    }

    /// A failure caused by a value in the batch (data exception, integrity rule), which one visit alone may have.
    static func isAboutTheData(_ error: StorageError) -> Bool {
        switch error.code {
        case .constraint: true
        case .postgres(let state): state.hasPrefix("22")
        default: false
        }
    }

    // MARK: the batch statement

    /// Every visit of a batch in one statement, its columns passed as arrays (a twentieth of the cost of a
    /// statement per visit: PostgreSQL's cost is in starting statements, not in rows). Per visit: the token's
    /// upsert counting the visit (`xmax = 0` tells a row this statement inserted from one it updated), the new
    /// tokens added to their day's count (`TokenDays`), its checkout when the token is new (a tokenless visit
    /// always gets one) or when its id is another way to the token's (`CheckoutID.needsAlias`, the same test in
    /// SQL), and the visit row, marked when it recorded its token (a round holds a token once, so that is the
    /// visit whose token this statement inserted). PostgreSQL runs every data-modifying part of a `WITH` exactly
    /// once.
    /// The raw token is not kept (its fields are in their columns): its array goes empty.
    private static let timedLength = CheckoutID.timeLength + CheckoutID.untimedLength
    static let batchSQL = """
        WITH input AS (
            SELECT * FROM unnest(
                ?::text[], ?::text[], ?::text[], ?::bigint[], ?::text[], ?::text[], ?::text[], ?::bigint[],
                ?::bigint[], ?::text[], ?::text[], ?::text[], ?::bigint[], ?::text[],
                ?::text[], ?::text[], ?::text[], ?::text[], ?::text[]
            ) AS i(checkout_id, external_purchase_id, raw_token, app_apple_id, bundle_id, token_bundle_id,
                token_type, token_created_at, token_expires_at, environment, source, app_account_token, visited_at,
                landing_path, \(Visit.utmParameterNames.joined(separator: ", ")))
        ), t AS (
            INSERT INTO tokens (external_purchase_id, checkout_id, raw_token, app_apple_id, bundle_id, token_type,
                token_created_at, token_expires_at, environment, source, app_account_token, first_seen_at,
                last_seen_at, visit_count)
            SELECT external_purchase_id, checkout_id, '', app_apple_id, token_bundle_id, token_type,
                token_created_at, token_expires_at, environment, source, app_account_token, visited_at, visited_at, 1
            FROM input WHERE external_purchase_id IS NOT NULL
            ON CONFLICT (external_purchase_id) DO UPDATE SET
                last_seen_at = GREATEST(tokens.last_seen_at, excluded.last_seen_at),
                visit_count = tokens.visit_count + 1,
                app_account_token = COALESCE(tokens.app_account_token, excluded.app_account_token)
            RETURNING external_purchase_id, visit_count, xmax = 0 AS inserted, first_seen_at, environment, source,
                checkout_id
        ), d AS (
            INSERT INTO token_days (day, environment, source, tokens)
            SELECT first_seen_at / \(Milliseconds.day), environment, source, count(*) FROM t WHERE t.inserted
            GROUP BY first_seen_at / \(Milliseconds.day), environment, source ORDER BY 1, 2, 3
            ON CONFLICT (day, environment, source) DO UPDATE SET tokens = token_days.tokens + excluded.tokens
        ), c AS (
            INSERT INTO checkouts (id, external_purchase_id, bundle_id, created_at)
            SELECT i.checkout_id, i.external_purchase_id, i.bundle_id, i.visited_at FROM input i
            WHERE i.external_purchase_id IS NULL
                OR EXISTS (SELECT 1 FROM t WHERE t.external_purchase_id = i.external_purchase_id AND (t.inserted
                    OR (t.checkout_id <> i.checkout_id AND (length(i.checkout_id) <> \(timedLength)
                        OR t.checkout_id <> substr(i.checkout_id, \(CheckoutID.timeLength + 1))))))
            ON CONFLICT (id) DO NOTHING
        ), v AS (
            INSERT INTO visits (checkout_id, external_purchase_id, visited_at, landing_path, had_token,
                recorded_token, \(Visit.utmParameterNames.joined(separator: ", ")))
            SELECT checkout_id, external_purchase_id, visited_at, landing_path,
                CASE WHEN external_purchase_id IS NULL THEN 0 ELSE 1 END,
                CASE WHEN EXISTS (SELECT 1 FROM t WHERE t.external_purchase_id = input.external_purchase_id
                    AND t.inserted) THEN 1 END, \
            \(Visit.utmParameterNames.joined(separator: ", "))
            FROM input
        )
        SELECT external_purchase_id, visit_count, inserted FROM t
        """

    /// The batch's columns as PostgreSQL array literals, in `batchSQL`'s order.
    static func batchParameters(_ visits: [Visit]) -> [SQLValue] {
        func column(_ value: (Visit) -> String?) -> SQLValue { .text(arrayLiteral(visits.map(value))) }
        func number(_ value: Int64?) -> String? { value.map { String($0) } }
        return [
            column { $0.checkoutId.rawValue }, column { $0.token?.token.externalPurchaseId.rawValue },
            column { _ in nil },
            column { number($0.token?.token.appAppleId) }, column { $0.bundleId.rawValue },
            column { $0.token?.token.bundleId.rawValue },
            column { $0.token?.token.tokenType }, column { number($0.token?.token.tokenCreationDate) },
            column { number($0.token?.token.tokenExpirationDate) }, column { $0.token?.token.environment.rawValue },
            column { $0.token?.source.rawValue },
            column { $0.token?.appAccountToken }, column { number($0.at) }, column { $0.landingPath },
        ] + Visit.utmParameterNames.map { name in column { $0.utm[name] } }
    }

    /// `{"a","b\"c",NULL}`: every element quoted, `\` and `"` escaped, nil as NULL. Built from UTF-8 bytes: both
    /// escaped characters are ASCII, and walking Characters cost a third of the batch writer's time.
    static func arrayLiteral(_ values: [String?]) -> String {
        var literal: [UInt8] = [UInt8(ascii: "{")]
        literal.reserveCapacity(values.count * 40)
        for (index, value) in values.enumerated() {
            if index > 0 { literal.append(UInt8(ascii: ",")) }
            guard let value else {
                literal.append(contentsOf: "NULL".utf8)
                continue
            }
            literal.append(UInt8(ascii: "\""))
            for byte in value.utf8 {
                if byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "\"") { literal.append(UInt8(ascii: "\\")) }
                literal.append(byte)
            }
            literal.append(UInt8(ascii: "\""))
        }
        literal.append(UInt8(ascii: "}"))
        return String(decoding: literal, as: UTF8.self)
    }

    /// Each visit's outcome from the rows of the tokens the batch touched.
    static func outcomes(_ visits: [Visit], _ rows: [[SQLValue]]) -> [RecordOutcome] {
        var byToken: [ExternalPurchaseID: (count: Int64, inserted: Bool)] = [:]
        for row in rows where row.count == 3 {
            if let id: ExternalPurchaseID = row[0].id() { byToken[id] = (row[1].integer ?? 0, row[2].integer == 1) }
        }
        return visits.map { visit in
            let found = visit.token.flatMap { byToken[$0.token.externalPurchaseId] }
            return RecordOutcome(
                checkoutId: visit.checkoutId,
                visitCount: found?.count ?? 0,
                isNewToken: found?.inserted ?? false
            )
        }
    }
}
