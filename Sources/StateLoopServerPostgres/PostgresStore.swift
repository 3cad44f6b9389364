import Foundation
import Logging
import NIOPosix
import PostgresNIO
import StateLoopServer
import StateLoopWire
import Synchronization

/// A `ServerStore` on PostgreSQL (postgres-nio), for a backend that outgrows one
/// process: the same guarantees as the SQLite store, in a database several server instances can
/// share.
///
/// ```swift
/// let store = try await PostgresStore(url: "postgres://app@127.0.0.1:5432/app")
/// let server = SyncServer(store: store, access: Rules())
/// ```
///
/// - **Schema.** Created and migrated when the store opens (versioned, idempotent, under an
///   advisory lock, so instances starting together do not race).
/// - **Writes.** Several at once (`writers`), each on a connection of its own, in a
///   `READ COMMITTED` transaction: each key's counter is raised by an upsert that holds the
///   key's row until the commit, so writers of one key on any instance get its versions one
///   after another; a mutation id takes an advisory lock before its remembered answer is read,
///   so the same mutation sent twice at once (to one instance or two) runs once. A deadlock's
///   victim runs again.
/// - **Commits of every instance.** Observers hear every commit made on the database, by any
///   store on it, once each, in commit order (`FeedFollower`, woken by `FeedListener`'s
///   notifications): a commit made through one instance reaches the push sockets of all.
/// - **Reads.** On pooled connections (`PostgresClient`), each in one `REPEATABLE READ`
///   snapshot.
/// - **Deadlines.** No wait for the database lasts longer than the store's deadline: for a
///   connection, for a turn to write, or for one statement's answer. Past it the request fails
///   with ``Unanswered`` and the server answers 503 with `Retry-After`. A request is bounded by
///   its waits: a read of one key by one deadline, a write that started by its queue's deadline
///   plus one per statement (it is not abandoned half way, so its caller learns its outcome).
///
/// Threading: a transaction's synchronous body runs on a thread of the store's own
/// (`StoreThreads`), which waits for each statement (`BlockingConnection`); never on the
/// cooperative pool. Observers are called on the follower's thread, one commit at a time.
public final class PostgresStore: ServerStore {
    /// Whether a commit notifies the other instances' listeners.
    private let notifies: Bool
    /// This store's name in its commits' notifications, so that its own listener skips them: its
    /// own commits reach its follower without a read of the feed.
    private let instance = UUID().uuidString
    /// The epoch stored in the database: the same for every instance and every restart, until
    /// the database is replaced (``epochRestart``).
    public let epoch: UInt64
    /// The new epoch this store began as it opened, because the database is not the one the
    /// epoch began in (a restored dump, a point-in-time recovery, a promoted replica): its
    /// history may have gone back. `nil` when it kept the epoch, and in every instance that
    /// opens the database after the one that began it.
    public let epochRestart: EpochRestart?
    private let client: PostgresClient
    private let running: Task<Void, Never>
    private let connection: PostgresConnection.Configuration
    private let logger: Logger
    private let deadline: Duration
    private let now: @Sendable () -> Date
    /// The threads writes run on, each with a connection of its own (`idleWriters`).
    private let writes: StoreThreads
    /// Reads beside writes and beside each other, one per pooled connection.
    private let reads: StoreThreads
    /// The writer connections not in use: one per writer thread at most, opened when a write
    /// finds none and closed when they break.
    private let idleWriters = Mutex<[BlockingConnection]>([])
    private let follower: FeedFollower
    private let listener: FeedListener

    /// Opens the store at `url` (`postgres://user[:password]@host[:port]/database`, with TLS
    /// as its `sslmode` and `sslrootcert` say),
    /// creating or migrating its tables and, on first use, its epoch. When the database is not
    /// the one the epoch began in (its cluster, WAL timeline, or its own or its tables' OIDs
    /// changed: a restore), it begins a new epoch, logs it and says why in ``epochRestart``.
    ///
    /// - Parameters:
    ///   - url: Where the database is, and as whom to connect:
    ///     `postgres://user[:password]@host[:port]/database` (`postgresql://` too; port 5432
    ///     by default). TLS as libpq reads the query: `sslmode` is `disable` (the default),
    ///     `prefer`, `require`, `verify-ca` or `verify-full` (the certificate must name the
    ///     host), and `sslrootcert` a PEM file of the CAs to trust (the system's otherwise).
    ///     Managed databases ask for `sslmode=verify-full`.
    ///   - maximumConnections: The most pooled connections for reads.
    ///   - writers: How many writes run at once, each on a connection of its own: while one
    ///     waits for the database, others go on. Writes of the same key still go one after
    ///     another (the key's row is locked until the commit), on this instance as across
    ///     instances. The change feed's follower and listener have a connection each besides.
    ///   - deadline: The longest a request waits for the database: for a connection, a
    ///     statement's answer, or its turn to write. Past it the request fails with
    ///     ``Unanswered`` (the server answers 503 with `Retry-After`), so the server keeps
    ///     answering while PostgreSQL is away; the next request tries again. Opening waits
    ///     for its first connection 10 s at least.
    ///   - now: The clock that times commits in the change feed.
    ///   - logger: Where the store logs: a new epoch begun at open, and what its connections
    ///     and change feed run into.
    ///   - notifiesOtherInstances: Whether each commit sends `NOTIFY` to wake the other
    ///     instances' followers, which then read the feed. An instance never wakes itself (its
    ///     own commits reach its follower directly). Without it, an instance hears of another's
    ///     commits only when a commit of its own, its listener's periodic check (every 5 s) or a
    ///     reconnection makes it read the feed: turn it off for a deployment of one instance,
    ///     where it costs a fifth of the commits per second (`docs/Benchmarks.md`).
    /// - Throws: ``BadURL`` for a URL it cannot read; ``OpenFailure`` when the database cannot
    ///   be reached or refuses (it does not exist, the role does not, a wrong password), saying
    ///   what to do; postgres-nio's errors when preparing the schema fails.
    public init(
        url: String, maximumConnections: Int = 8, writers: Int = 4, deadline: Duration = .seconds(5),
        now: @escaping @Sendable () -> Date = { Date() },
        logger: Logger = Logger(label: "stateloop.postgres"), notifiesOtherInstances: Bool = true
    ) async throws {
        notifies = notifiesOtherInstances
        guard let parts = URLComponents(string: url), parts.scheme == "postgres" || parts.scheme == "postgresql",
            let host = parts.host, let user = parts.user, parts.path.count > 1
        else { throw BadURL(url: url) }
        let (port, password, database) = (parts.port ?? 5432, parts.password, String(parts.path.dropFirst()))
        let tls: PostgresTLS
        do {
            tls = try PostgresTLS(query: parts.queryItems ?? [])
        } catch {
            throw BadURL(url: url, reason: error)
        }
        var pooled = PostgresClient.Configuration(host: host, port: port, username: user, password: password, database: database, tls: tls.pooled)
        pooled.options.maximumConnections = maximumConnections
        let connectTimeout = TimeAmount.nanoseconds(Int64(deadline / .nanoseconds(1)))
        pooled.options.connectTimeout = deadline
        var single = PostgresConnection.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: try tls.single())
        single.options.connectTimeout = connectTimeout
        // One connection first: the pool would retry a missing database or role for ever. A
        // new connection costs PostgreSQL a process: on a busy machine it may take longer than
        // a request's deadline, so opening waits 10 s at least.
        try await Self.checkConnection(
            single, to: Target(host: host, port: port, user: user, database: database), deadline: max(deadline, Self.openingDeadline), logger: logger)
        connection = single
        self.deadline = deadline
        client = PostgresClient(configuration: pooled, backgroundLogger: logger)
        running = Task { [client] in await client.run() }
        reads = StoreThreads(count: maximumConnections)
        writes = StoreThreads(count: writers)
        self.logger = logger
        self.now = now
        let prepared: PostgresSchema.Prepared
        do {
            prepared = try await PostgresSchema.prepare(client, now: now(), logger: logger)
        } catch {
            running.cancel()
            throw error
        }
        epoch = prepared.epoch
        epochRestart = prepared.restart
        if let restart = prepared.restart {
            logger.warning("PostgreSQL store on \(database): \(restart)")
        }
        follower = FeedFollower(after: prepared.feed, configuration: connection, epoch: prepared.epoch, deadline: deadline, logger: logger)
        listener = FeedListener(configuration: connection, follower: follower, ownInstance: instance, deadline: deadline, logger: logger)
    }

    deinit {
        close()
    }

    /// The longest opening waits for its first connection when the deadline is shorter.
    static let openingDeadline = Duration.seconds(10)

    /// Begins a new epoch in the database at `url`, so that clients drop what they hold and
    /// take its values. Opening a store does this by itself when the database is not the one
    /// its epoch began in (``epochRestart``); run this after a restore it cannot see: a
    /// data-only restore into the existing tables, or a copy of the data directory started on
    /// the same timeline. Stop every instance first (a running one keeps the old epoch), and
    /// start them after. Returns the new epoch (the one opening began, if it did).
    ///
    /// - Throws: what ``init(url:maximumConnections:writers:deadline:now:logger:notifiesOtherInstances:)`` throws.
    @discardableResult
    public static func startNewEpoch(url: String, now: Date = Date(), logger: Logger = Logger(label: "stateloop.postgres")) async throws -> UInt64 {
        let store = try await PostgresStore(url: url, maximumConnections: 1, writers: 1, now: { now }, logger: logger)
        defer { store.close() }
        if let restart = store.epochRestart { return restart.epoch }
        let epoch = try await PostgresSchema.startNewEpoch(store.client, now: now, logger: logger)
        logger.notice("PostgreSQL store: new epoch \(epoch) (was \(store.epoch)), begun by hand")
        return epoch
    }

    /// Stops following the change feed and closes the store's connections; a write or read
    /// still under way ends first. Call it when the server stops: an observer that holds the
    /// store (a closure that reads its epoch, say) keeps it, with its connections, for ever.
    public func close() {
        running.cancel()
        listener.stop()
        follower.close()
        idleWriters.withLock { writers in
            for writer in writers { writer.close() }
            writers.removeAll()
        }
    }

    /// The database did not answer within the store's deadline: it is down, unreachable or
    /// overloaded. The server answers the request 503 with `Retry-After`; the store goes on
    /// trying with the next request.
    public struct Unanswered: Error, CustomStringConvertible {
        /// How long the store waited.
        public let waited: Duration

        public var description: String {
            "PostgreSQL did not answer within \(waited): it is down, unreachable or overloaded"
        }
    }

    /// A URL that is not `postgres://user@host[:port]/database[?sslmode=…&sslrootcert=…]`.
    public struct BadURL: Error, CustomStringConvertible {
        /// The URL given.
        public let url: String
        /// What is wrong in it, past its form: a query parameter.
        public let reason: Reason?

        /// What is wrong in a URL of the right form.
        public struct Reason: Error, Sendable, Equatable, CustomStringConvertible {
            public let description: String

            init(_ description: String) {
                self.description = description
            }
        }

        init(url: String, reason: Reason? = nil) {
            self.url = url
            self.reason = reason
        }

        public var description: String {
            let shown = PostgresStore.redacted(url)
            if let reason { return "'\(shown)': \(reason)" }
            return
                "'\(shown)' is not a PostgreSQL URL: write postgres://user[:password]@host[:port]/database[?sslmode=verify-full&sslrootcert=ca.pem]"
        }
    }

    /// Runs `body` in one transaction on a writer connection; observers are told, in commit
    /// order, before it returns (unless reading the feed failed just after the commit: they are
    /// told on the next catch-up then).
    ///
    /// A transaction PostgreSQL chose as a deadlock's victim (two writes taking the same keys
    /// in opposite orders, on this instance or across instances) is rolled back and run again,
    /// up to `retriesAfterDeadlock` times: the body is a function of what it reads.
    public func write<Result: Sendable>(_ body: @Sendable (any StoreTransaction) throws -> Result) async throws -> Result {
        let (result, handedOver) = try await withoutActuallyEscaping(body) { body in
            try await writes.run(within: deadline) { [self] in
                var attempt = 0
                while true {
                    let connection = try takeWriter()
                    let transaction = PostgresTransaction(
                        connection: connection, epoch: epoch, now: now, locksKeys: true, notification: notifies ? instance : nil)
                    do {
                        return try writeOnce(body, in: transaction, on: connection)
                    } catch  where transaction.conflicted && attempt < Self.retriesAfterDeadlock {
                        // The kit's transactions wrap store errors in their own: the flag, not
                        // the error's type, says a deadlock ended this one.
                        attempt += 1
                    }
                }
            }
        }
        try? await handedOver?.get()
        return result
    }

    /// How many times a write chosen as a deadlock's victim runs again.
    static let retriesAfterDeadlock = 3

    /// One attempt of a write; its connection is given back after (or closed if it broke).
    private func writeOnce<Result: Sendable>(
        _ body: (any StoreTransaction) throws -> Result, in transaction: PostgresTransaction, on connection: BlockingConnection
    ) throws -> (Result, EventLoopFuture<Void>?) {
        do {
            try connection.execute("BEGIN")
            let result = try body(transaction)
            let sealed = try transaction.seal()
            try connection.execute("COMMIT")
            giveBack(connection)
            // Handed to the follower from this thread, after the commit, so that a commit
            // reaches it after every commit before it on this thread.
            return (result, sealed.map { follower.handOver($0) })
        } catch {
            rollBack(connection)
            throw error
        }
    }

    /// Runs `body` in one read-only `REPEATABLE READ` transaction on a pooled connection.
    public func read<Result: Sendable>(_ body: @Sendable (any StoreTransaction) throws -> Result) async throws -> Result {
        try await withoutActuallyEscaping(body) { body in
            let (epoch, now) = (epoch, now)
            let box = WorkBox<@Sendable (BlockingConnection) throws -> Result> { connection in
                try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                defer { try? connection.execute("COMMIT") }
                return try body(PostgresTransaction(connection: connection, epoch: epoch, now: now, locksKeys: false, notification: nil))
            }
            // Whatever happened, the box lets go of the body before this scope ends.
            defer { _ = box.abandon() }
            // Given up at the deadline only while it waits for a connection or a thread.
            return try await Deadline.race(deadline, giveUp: { box.abandon() }) { [client, reads, logger, deadline] in
                try await client.withConnection { connection in
                    try await reads.run {
                        guard let work = box.take() else { throw Unanswered(waited: deadline) }
                        return try work(BlockingConnection(connection: connection, logger: logger, deadline: deadline))
                    }
                }
            }
        }
    }

    /// Reads the value and the client's progress in one `REPEATABLE READ` snapshot.
    public func read(_ key: ResourceKey, lastMutationIDOf client: ClientID?, scope: String) async throws -> (
        value: StoredValue?, lastMutationID: UInt64?
    ) {
        try await Deadline.race(deadline) { [self] in try await readNow(key, lastMutationIDOf: client, scope: scope) }
    }

    private func readNow(_ key: ResourceKey, lastMutationIDOf client: ClientID?, scope: String) async throws -> (
        value: StoredValue?, lastMutationID: UInt64?
    ) {
        try await self.client.withTransaction(logger: logger) { [epoch, logger] connection in
            try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
            var value: StoredValue?
            let rows = try await connection.query(
                "SELECT counter, json FROM stateloop_values WHERE resource = \(key.resource) AND id = \(key.id)", logger: logger
            )
            for try await (counter, json) in rows.decode((Int64, Data).self) {
                value = StoredValue(key: key, version: Version(epoch: epoch, counter: UInt64(counter)), json: json)
            }
            var lastMutationID: UInt64?
            if let client {
                let progress = try await connection.query(
                    "SELECT last_sequence FROM stateloop_clients WHERE scope = \(scope) AND client = \(client.rawValue)", logger: logger
                )
                for try await sequence in progress.decode(Int64.self) { lastMutationID = UInt64(bitPattern: sequence) }
            }
            return (value, lastMutationID)
        }
    }

    /// Every client's processed mutations, as stored: for an audit from outside the server.
    public func clientProgress() async throws -> [ClientProgress] {
        try await Deadline.race(deadline) { [client, logger] in
            let rows = try await client.query("SELECT scope, client, last_sequence FROM stateloop_clients", logger: logger)
            var progress: [ClientProgress] = []
            for try await (scope, id, sequence) in rows.decode((String, String, Int64).self) {
                progress.append(ClientProgress(scope: scope, client: ClientID(rawValue: id), lastMutationID: UInt64(bitPattern: sequence)))
            }
            return progress
        }
    }

    /// Forgets the clients that processed no mutation since `cutoff`, with their last answers.
    public func forgetClients(idleSince cutoff: Date) async throws -> Int {
        let milliseconds = Int64(max(0, cutoff.timeIntervalSince1970 * 1_000))
        return try await client.withTransaction(logger: logger) { [logger] connection in
            try await connection.query(
                """
                DELETE FROM stateloop_answers a USING stateloop_clients c
                WHERE a.scope = c.scope AND a.client = c.client AND c.last_seen < \(milliseconds)
                """, logger: logger)
            let rows = try await connection.query(
                "DELETE FROM stateloop_clients WHERE last_seen < \(milliseconds) RETURNING 1", logger: logger
            )
            return try await rows.collect().count
        }
    }

    /// Reads up to `limit` entries of the change feed after the position `sequence`.
    public func changes(after sequence: UInt64, limit: Int) async throws -> [StoredChange] {
        try await Deadline.race(deadline) { [self] in try await changesNow(after: sequence, limit: limit) }
    }

    private func changesNow(after sequence: UInt64, limit: Int) async throws -> [StoredChange] {
        let rows = try await client.query(
            """
            SELECT seq, commit_seq, committed_at, resource, id, epoch, counter, json, scope, mutation
            FROM stateloop_changes WHERE seq > \(Int64(clamping: sequence)) AND row_fields IS NULL ORDER BY seq LIMIT \(max(0, limit))
            """, logger: logger)
        var changes: [StoredChange] = []
        for try await row in rows {
            let (seq, commit, time, resource, id, epoch, counter, json, scope, mutation) = try row.decode(
                (Int64, Int64, Int64, String, String, Int64, Int64, Data, String?, String?).self
            )
            changes.append(
                StoredChange(
                    sequence: UInt64(seq), commit: UInt64(commit), time: StoreClock.date(microseconds: time),
                    value: StoredValue(
                        key: ResourceKey(resource: resource, id: id), version: Version(epoch: UInt64(epoch), counter: UInt64(counter)), json: json
                    ),
                    cause: scope.flatMap { scope in mutation.map { ChangeCause(scope: scope, mutation: MutationID(rawValue: $0)) } }
                ))
        }
        return changes
    }

    /// Deletes the feed's entries committed before `cutoff`, except those of the newest commit
    /// of each table (values and clients' progress) and of every commit after the older of
    /// the two, kept whole in both tables: a reader never sees part of a commit, and positions
    /// only rise. One transaction, so that a catch-up never reads between the two deletes.
    public func forgetChanges(committedBefore cutoff: Date) async throws -> Int {
        let before = StoreClock.microseconds(cutoff)
        return try await client.withTransaction(logger: logger) { [logger] connection in
            // The newest commit with values is the newest entry's (positions rise with commits),
            // found through the primary key: `commit_seq` has no index in that table. `least`
            // skips an empty table's NULL; with both empty nothing is deleted.
            let kept = try await connection.query(
                """
                SELECT least((SELECT commit_seq FROM stateloop_changes ORDER BY seq DESC LIMIT 1),
                             (SELECT max(commit_seq) FROM stateloop_progress))
                """, logger: logger)
            var oldestKept: Int64?
            for try await value in kept.decode(Int64?.self) { oldestKept = value }
            guard let oldestKept else { return 0 }
            try await connection.query(
                "DELETE FROM stateloop_progress WHERE committed_at < \(before) AND commit_seq < \(oldestKept)", logger: logger
            )
            // A collection's cookie at or before the newest position forgotten is answered whole.
            try await connection.query(
                """
                INSERT INTO stateloop_meta (key, value)
                SELECT 'forgotten_through', max(seq) FROM stateloop_changes WHERE committed_at < \(before) AND commit_seq < \(oldestKept)
                HAVING max(seq) IS NOT NULL
                ON CONFLICT (key) DO UPDATE SET value = greatest(stateloop_meta.value, excluded.value)
                """, logger: logger)
            let rows = try await connection.query(
                "DELETE FROM stateloop_changes WHERE committed_at < \(before) AND commit_seq < \(oldestKept) RETURNING 1", logger: logger
            )
            return try await rows.collect().count
        }
    }

    /// Makes the index that answers a collection's queries on `fields`, if it is not there yet.
    public func prepareRows(of collection: String, indexedBy fields: [String]) async throws {
        guard RowSQL.isCollectionName(collection), fields.allSatisfy(RowSQL.isFieldName) else { return }
        try await client.query(PostgresQuery(unsafeSQL: PostgresRowSQL.index(collection, fields)), logger: logger)
    }

    /// Adds an observer of every later commit made on the database, through this store or
    /// any other store on it.
    public func observeCommits(_ observer: @escaping @Sendable (CommittedChanges) -> Void) {
        follower.observe(observer)
    }

    /// An idle writer connection, or a new one. On `writes` only.
    private func takeWriter() throws -> BlockingConnection {
        while let idle = idleWriters.withLock({ $0.popLast() }) {
            if !idle.connection.isClosed { return idle }
        }
        return try BlockingConnection.open(connection, deadline: deadline, logger: logger)
    }

    /// Keeps a writer connection for the next write.
    private func giveBack(_ writer: BlockingConnection) {
        idleWriters.withLock { $0.append(writer) }
    }

    /// Ends a failed transaction and gives its connection back; a connection that cannot even
    /// roll back is closed, and a later write opens another.
    private func rollBack(_ connection: BlockingConnection) {
        do {
            try connection.execute("ROLLBACK")
            giveBack(connection)
        } catch {
            connection.close()
        }
    }
}

/// Work handed to a thread of the store's (``StoreThreads``), held until the thread takes it or
/// its caller gives up waiting; once given up, the box no longer holds it. (Callers pass a
/// transaction body through `withoutActuallyEscaping`, which traps if anything still holds the
/// body when they return.)
final class WorkBox<Work: Sendable>: Sendable {
    private enum Held {
        case work(Work)
        case taken
        case abandoned
    }

    private let held: Mutex<Held>

    init(_ work: Work) {
        held = Mutex(.work(work))
    }

    /// The work, no longer held here; `nil` if its caller gave up first.
    func take() -> Work? {
        held.withLock { held in
            guard case .work(let work) = held else { return nil }
            held = .taken
            return work
        }
    }

    /// Gives the work up, unless a thread took it already; returns whether it did.
    func abandon() -> Bool {
        held.withLock { held in
            guard case .work = held else { return false }
            held = .abandoned
            return true
        }
    }
}
