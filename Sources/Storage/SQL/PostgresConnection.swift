import CLibPQ
import Foundation
import Synchronization

/// One PostgreSQL session through libpq, with its statements prepared once. Reconnects by itself after the
/// server went away (a restart, a failover), but never inside a transaction, and not more than once a second
/// while no other session connects, so an outage gives callers a quick `.unavailable` instead of a wait on every
/// call. Not thread-safe: one thread at a time, as `SQLConnection` says.
final class PostgresConnection: SQLConnection {
    private let target: PostgresTarget
    private var handle: OpaquePointer?
    /// Statement names by SQL and parameter types (a statement's parameter types are fixed when it is prepared).
    private var statements: [String: String] = [:]
    private var inTransaction = false
    /// The longest wait for the server's answer, in milliseconds: its `statement_timeout` and a margin; nil while
    /// that is off (a migration may run or wait for another instance's as long as it takes). See `answer()`.
    private var answerLimit: Int32?
    static let answerMarginMilliseconds = 2_000
    /// No reconnect before this time, unless another session has connected since (`connects` has moved on):
    /// the last attempt failed.
    private var quietUntil: (instant: ContinuousClock.Instant, connects: Int)?
    static let reconnectPause: Duration = .seconds(1)
    /// Sessions connected in this process so far, by database. A session that failed to reconnect waits out its
    /// pause only while no other has connected to the same database: once one has (the readiness probe's,
    /// the ledger writer's), the database is back, and waiting on would refuse landings it could take.
    private static let connects = Mutex<[String: Int]>([:])
    private var connectsToTarget: Int { Self.connects.withLock { $0[target.url, default: 0] } }

    init(target: PostgresTarget) throws(StorageError) {
        self.target = target
        try connect()
    }

    deinit {
        if let handle { PQfinish(handle) }
    }

    // MARK: SQLConnection

    func execute(_ sql: String) throws(StorageError) {
        try reconnectingOnce { () throws(StorageError) in try executeOnce(sql) }
    }

    private func executeOnce(_ sql: String) throws(StorageError) {
        let result = try exec(SQLDialect.postgres.statement(sql))
        defer { PQclear(result) }
        try check(result)
    }

    /// `statement_timeout` for this session (0: none), and the wait for answers with it (`answerLimit`).
    func setStatementTimeout(milliseconds: Int) throws(StorageError) {
        try execute("SET statement_timeout = \(milliseconds)")
        answerLimit = Self.answerLimit(statementTimeoutMilliseconds: milliseconds)
    }

    static func answerLimit(statementTimeoutMilliseconds milliseconds: Int) -> Int32? {
        milliseconds > 0 ? Int32(clamping: milliseconds + answerMarginMilliseconds) : nil
    }

    /// PQexec, with the wait for its answer bounded (`answer()`): the last result, as PQexec returns.
    private func exec(_ sql: String) throws(StorageError) -> OpaquePointer? {
        guard PQsendQuery(handle, sql) == 1 else { return nil }
        return try lastResult()
    }

    /// Reads every result of what was sent, keeping the last (an error stops the statements after it).
    private func lastResult() throws(StorageError) -> OpaquePointer? {
        var last: OpaquePointer?
        do throws(StorageError) {
            while let result = try answer() {
                PQclear(last)
                last = result
            }
        } catch {
            PQclear(last)
            throw error
        }
        return last
    }

    /// The next result of what was sent, once it has arrived, waiting at most `answerLimit`. A server that answers
    /// nothing in that time (stalled: a frozen host, an I/O stall; its own statement_timeout never fires then)
    /// loses the session, and the caller gets `.unavailable` at once instead of holding a landing for as long as
    /// it stalls; the next call connects afresh (bounded by `connect_timeout`).
    private func answer() throws(StorageError) -> OpaquePointer? {
        guard let handle else { return nil }
        if let answerLimit, clibpq_await_answer(handle, answerLimit) == 0 {
            disconnect()
            throw StorageError(
                .unavailable,
                "the database at \(target.redactedURL) did not answer within \(answerLimit / 1000) s"
            )
        }
        return PQgetResult(handle)
    }

    @discardableResult
    func query(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> [[SQLValue]] {
        try reconnectingOnce { () throws(StorageError) in try run(sql, parameters) }
    }

    /// The count of rows the statement changed, from the command tag libpq keeps (`INSERT 0 1`).
    @discardableResult
    func change(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> Int {
        try reconnectingOnce { () throws(StorageError) in
            try run(sql, parameters) { result in PQcmdTuples(result).flatMap { Int(String(cString: $0)) } ?? 0 }
        }
    }

    /// Runs `body` on a live session. A session that turns out dead (the server restarted since its last use:
    /// libpq learns it only from the failed call) is replaced and `body` runs once more, unless a transaction
    /// was open on it: that work is gone, and the caller must fail it.
    private func reconnectingOnce<T>(_ body: () throws(StorageError) -> T) throws(StorageError) -> T {
        try ensureConnected()
        do {
            return try body()
        } catch {
            guard !inTransaction, let handle, PQstatus(handle) != CONNECTION_OK else { throw error }
            try connect()
            return try body()
        }
    }

    /// One statement in its own implicit transaction, never repeated: if the session drops, the commit may
    /// have happened, so a write repeated on a new session could count twice.
    func queryOnce(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> [[SQLValue]] {
        try ensureConnected()
        return try run(sql, parameters)
    }

    /// Runs `statements` in one round trip (libpq's pipeline mode) as one implicit transaction: they commit
    /// together at the pipeline's end, or, after the first failure, none does (that failure is thrown). Returns
    /// each statement's rows. Never repeated after a lost session: the commit may have happened.
    func pipelined(_ statements: [(sql: String, parameters: [SQLValue])]) throws(StorageError) -> [[[SQLValue]]] {
        try ensureConnected()
        // Statements are prepared first: preparing is a round trip of its own, not allowed inside a pipeline.
        var names: [String] = []
        for statement in statements { names.append(try prepared(statement.sql, statement.parameters)) }
        guard PQenterPipelineMode(handle) == 1 else { throw lostSession("cannot enter pipeline mode") }
        defer {
            // A session that cannot leave pipeline mode (results left unread after a failed send) is useless:
            // dropped, so the next call connects afresh instead of failing on it forever.
            if PQexitPipelineMode(handle) != 1 { disconnect() }
        }
        for (name, statement) in zip(names, statements) {
            let sent = Self.withParameters(statement.parameters) { values in
                PQsendQueryPrepared(handle, name, Int32(statement.parameters.count), values, nil, nil, 0)
            }
            guard sent == 1 else { throw lostSession("cannot send") }
        }
        guard PQpipelineSync(handle) == 1 else { throw lostSession("cannot end the pipeline") }
        var rows: [[[SQLValue]]] = []
        var failure: StorageError?
        for _ in statements {
            let result = try answer()
            defer { PQclear(result) }
            let status = result.map(PQresultStatus) ?? PGRES_FATAL_ERROR
            if status == PGRES_PIPELINE_ABORTED || failure != nil {
                failure = failure ?? StorageError(.postgres("25P02"), "the pipeline was aborted")
            } else {
                do throws(StorageError) {
                    try check(result)
                    rows.append(Self.rows(of: result))
                } catch {
                    failure = error
                }
            }
            guard result != nil else { throw failure ?? lostSession("the session ended mid-pipeline") }
            // Each statement's results end with a null result.
            while let extra = try answer() { PQclear(extra) }
        }
        // The sync point: the implicit transaction has committed (or rolled back) when it arrives. An error
        // before it (the commit itself failing) fails the whole pipeline.
        while let result = try answer() {
            defer { PQclear(result) }
            let status = PQresultStatus(result)
            if status == PGRES_PIPELINE_SYNC { break }
            if status == PGRES_FATAL_ERROR, failure == nil {
                do throws(StorageError) { try check(result) } catch { failure = error }
            }
        }
        if let failure { throw failure }
        guard PQstatus(handle) == CONNECTION_OK else { throw lostSession("the session ended at the commit") }
        return rows
    }

    private func lostSession(_ what: String) -> StorageError {
        let detail = handle.map { Self.trimmed(String(cString: PQerrorMessage($0))) } ?? ""
        return StorageError(.unavailable, "\(what): \(detail)")
    }

    /// Parameters as the C strings libpq takes (NULL for SQL NULL), alive while `body` runs.
    private static func withParameters<T>(
        _ parameters: [SQLValue],
        _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> T
    ) -> T {
        let values: [UnsafeMutablePointer<CChar>?] = parameters.map { value in
            switch value {
            case .integer(let integer): strdup(String(integer))
            // PostgreSQL's text cannot hold NUL (C strings end there): dropped, never a silent cut.
            // Looked for in the UTF-8 bytes: Foundation's `contains` on a String was a tenth of a landing batch's time.
            case .text(let text): strdup(text.utf8.contains(0) ? text.replacingOccurrences(of: "\0", with: "") : text)
            case .null: nil
            }
        }
        defer { values.forEach { free($0) } }
        return values.map { $0.map { UnsafePointer($0) } }.withUnsafeBufferPointer { body($0.baseAddress) }
    }

    private func run(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> [[SQLValue]] {
        try run(sql, parameters, Self.rows(of:))
    }

    /// Runs the statement and reads what `read` takes from its result.
    private func run<T>(_ sql: String, _ parameters: [SQLValue], _ read: (OpaquePointer?) -> T) throws(StorageError)
        -> T
    {
        let name = try prepared(sql, parameters)
        let sent = Self.withParameters(parameters) { values in
            PQsendQueryPrepared(handle, name, Int32(parameters.count), values, nil, nil, 0)
        }
        let result = sent == 1 ? try lastResult() : nil
        defer { PQclear(result) }
        try check(result)
        return read(result)
    }

    func begin() throws(StorageError) {
        try execute("BEGIN")
        inTransaction = true
    }

    /// PostgreSQL's default (read committed) gives each statement a snapshot of its own; repeatable read gives
    /// the transaction one.
    func beginSnapshot() throws(StorageError) {
        try execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        inTransaction = true
    }

    func commit() throws(StorageError) {
        defer { inTransaction = false }
        try reconnectingOnce { () throws(StorageError) in
            let result = try exec("COMMIT")
            defer { PQclear(result) }
            try check(result)
            // In a transaction a failed statement aborted, COMMIT succeeds with the tag ROLLBACK: not a commit.
            guard let tag = PQcmdStatus(result), String(cString: tag) == "COMMIT" else {
                throw StorageError(.postgres("25P02"), "the transaction was rolled back, not committed")
            }
        }
    }

    func rollback() throws(StorageError) {
        defer { inTransaction = false }
        try execute("ROLLBACK")
    }

    var isInTransaction: Bool { inTransaction }

    // MARK: the session

    private func disconnect() {
        if let handle { PQfinish(handle) }
        handle = nil
        statements = [:]
        inTransaction = false
    }

    private func connect() throws(StorageError) {
        disconnect()
        var settings: [(String, String)] = [
            ("dbname", target.url),
            ("connect_timeout", String(target.connectTimeoutSeconds)),
            ("application_name", "linkout"),
            // A server that vanished without closing the socket is noticed within about 20 s, not hours.
            ("keepalives", "1"), ("keepalives_idle", "10"), ("keepalives_interval", "5"), ("keepalives_count", "2"),
            // Keepalives watch an idle socket only: a server that vanishes with a request unacknowledged would
            // otherwise be retransmitted to for a quarter of an hour.
            ("tcp_user_timeout", "10000"),
        ]
        if let password = target.password { settings.append(("password", password)) }
        let keywords = settings.map { strdup($0.0) }
        let values = settings.map { strdup($0.1) }
        defer { (keywords + values).forEach { free($0) } }
        var keywordPointers = keywords.map { $0.map { UnsafePointer($0) } } + [nil]
        var valuePointers = values.map { $0.map { UnsafePointer($0) } } + [nil]
        // expand_dbname = 1: `dbname` may be a whole URI; the keywords after it (password, options) add to it.
        let connection = PQconnectdbParams(&keywordPointers, &valuePointers, 1)
        guard let connection, PQstatus(connection) == CONNECTION_OK else {
            let message = connection.map { String(cString: PQerrorMessage($0)) } ?? "out of memory"
            if let connection { PQfinish(connection) }
            quietUntil = (ContinuousClock.now + Self.reconnectPause, connectsToTarget)
            throw StorageError(
                .unavailable,
                "cannot connect to \(target.redactedURL): \(target.redacting(Self.trimmed(message)))"
            )
        }
        clibpq_silence_notices(connection)
        handle = connection
        quietUntil = nil
        // Set after connecting rather than as libpq `options`, which would replace options given in the URL.
        // Every session commits only once the WAL is flushed, whatever the role's or database's default: a
        // visit is acknowledged after its commit, and must survive the server's crash. A session idle inside a
        // transaction is one whose process stalled (frozen, its host gone): the server ends it, so the row
        // locks it holds (the day's `token_days` row every landing updates) do not stop every other instance's
        // landings for as long as it stays so.
        answerLimit = Self.answerLimit(statementTimeoutMilliseconds: target.statementTimeoutMilliseconds)
        try executeOnce(
            "SET statement_timeout = \(target.statementTimeoutMilliseconds); SET synchronous_commit = on; "
                + "SET idle_in_transaction_session_timeout = \(Self.idleInTransactionMilliseconds)"
        )
        Self.connects.withLock { $0[target.url, default: 0] += 1 }
    }

    /// How long the server lets a session sit idle inside a transaction before it ends it. linkout's
    /// transactions send their statements one after another; only a stalled process leaves one open this long.
    static let idleInTransactionMilliseconds = 30_000

    /// Reconnects a session the server dropped, unless a transaction was open on it (its work is gone; the
    /// caller must fail it) or the last attempt failed less than a second ago and no session has connected since.
    private func ensureConnected() throws(StorageError) {
        if let handle {
            // A session the server ended while it was idle (a restart, `pg_terminate_backend`) is noticed before
            // anything is sent on it, while replacing it is still safe: libpq learns of the end only when a call
            // fails, and a write that failed on it could not be repeated (its commit may have happened). Not
            // inside a transaction, whose work a lost session fails anyway: a poll per statement or transaction.
            if PQstatus(handle) == CONNECTION_OK, inTransaction || clibpq_server_ended(handle) == 0 { return }
        }
        guard !inTransaction else { throw StorageError(.unavailable, "the database connection was lost") }
        if let quietUntil, ContinuousClock.now < quietUntil.instant,
            connectsToTarget == quietUntil.connects
        {
            throw StorageError(.unavailable, "the database at \(target.redactedURL) is unavailable")
        }
        try connect()
    }

    private func prepared(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> String {
        let signature = parameters.map { if case .integer = $0 { "i" } else { "t" } }.joined()
        let key = signature + ":" + sql
        if let name = statements[key] { return name }
        let name = "s\(statements.count)"
        // Integers are sent as int8, so `INSERT … SELECT ?` and `? + 1` type them; text and NULL are left for
        // the server to infer from where they are used (a text column, a comparison).
        let types: [Oid] = parameters.map { if case .integer = $0 { 20 } else { 0 } }
        let text = Self.numbered(SQLDialect.postgres.statement(sql))
        let result = PQsendPrepare(handle, name, text, Int32(types.count), types) == 1 ? try lastResult() : nil
        defer { PQclear(result) }
        try check(result)
        statements[key] = name
        return name
    }

    private func check(_ result: OpaquePointer?) throws(StorageError) {
        let status = result.map(PQresultStatus) ?? PGRES_FATAL_ERROR
        guard status != PGRES_COMMAND_OK, status != PGRES_TUPLES_OK else { return }
        let message = Self.trimmed(
            result.flatMap { PQresultErrorMessage($0) }.map { String(cString: $0) }
                ?? handle.map { String(cString: PQerrorMessage($0)) } ?? "no result"
        )
        if let state = result.flatMap({ PQresultErrorField($0, clibpq_diag_sqlstate()) }) {
            throw StorageError.postgres(String(cString: state), message)
        }
        // No SQLSTATE: the connection failed (libpq made the error itself).
        throw StorageError(.unavailable, message)
    }

    // MARK: pure helpers

    /// `?` parameters as PostgreSQL's `$1, $2, …`, leaving quoted text and identifiers alone.
    static func numbered(_ sql: String) -> String {
        var output = ""
        output.reserveCapacity(sql.utf8.count + 16)
        var number = 0
        var quote: Character?
        for character in sql {
            if let open = quote {
                if character == open { quote = nil }
                output.append(character)
            } else if character == "'" || character == "\"" {
                quote = character
                output.append(character)
            } else if character == "?" {
                number += 1
                output += "$\(number)"
            } else {
                output.append(character)
            }
        }
        return output
    }

    /// Rows as values: integer types (int2/4/8, oid, and numeric without a fraction, which `sum` returns) become
    /// `.integer`, booleans 1 or 0, the rest text.
    static func rows(of result: OpaquePointer?) -> [[SQLValue]] {
        guard let result else { return [] }
        let count = PQntuples(result)
        let columns = PQnfields(result)
        var rows: [[SQLValue]] = []
        rows.reserveCapacity(Int(count))
        for row in 0..<count {
            var values: [SQLValue] = []
            values.reserveCapacity(Int(columns))
            for column in 0..<columns {
                guard PQgetisnull(result, row, column) == 0, let raw = PQgetvalue(result, row, column) else {
                    values.append(.null)
                    continue
                }
                let text = String(cString: raw)
                switch PQftype(result, column) {
                case 20, 21, 23, 26: values.append(Int64(text).map(SQLValue.integer) ?? .text(text))
                case 16: values.append(.integer(text == "t" ? 1 : 0))
                case 1700: values.append(Int64(text).map(SQLValue.integer) ?? .text(text))
                default: values.append(.text(text))
                }
            }
            rows.append(values)
        }
        return rows
    }

    private static func trimmed(_ message: String) -> String {
        message.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "\n", with: " ")
    }
}
