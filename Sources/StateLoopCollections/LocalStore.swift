import Foundation
import GRDB
import StateLoop
import StateLoopSync
import StateLoopWire
import Synchronization

/// The rows an app keeps on the device: every row its subscriptions hold, once however many
/// hold it, each subscription's cookie, and the queue of the app's changes to rows not yet in
/// the server's answers. One SQLite file (or memory, for tests), read at launch: the rows of
/// the last session are on screen before the server answers, and the queue is sent again.
///
/// ```swift
/// let store = try LocalStore(path: folder + "/tasks.sqlite")
/// let tasks = store.collection(Board.tasks, mutations: TaskMutation.self, send: server.rowMutations(at: "/tasks"))
/// let open = tasks.live(RowQuery(where: [.init("done", equals: .bool(false))], orderedBy: [.init("position")]))
/// let subscription = tasks.subscribe(server.rows(at: "/tasks", query: "mine", as: TaskRow.self))
/// ```
///
/// The store sends the queued changes of all its collections one at a time, in the order they
/// were made, under one client id kept in the file: the server's `lastMutationID` then speaks of
/// this queue across launches, and a change leaves the screen's overlay only once every
/// subscription's rows contain it.
public final class LocalStore: Sendable {
    /// The client every subscription and change of the store reads and writes as.
    public let clientID: ClientID
    private let database: DatabaseQueue
    let policy: ResourcePolicy
    let clock: any Clock<Duration>
    let queue: MutationQueue
    /// Orders every use of the file with ``close()``: GRDB's connection must never be used once
    /// closed (it crashes), and a subscription's or the queue's task may be finishing a step as
    /// the app closes the store. Recursive, so that a check of ``isClosed`` inside a use is safe.
    private let gate = NSRecursiveLock()
    /// Whether ``close()`` was called; read and written under `gate`.
    nonisolated(unsafe) private var closed = false
    /// The connection in use on the thread that holds `gate`: a read asked for inside another
    /// use (an app's `RowMutation.apply(to:)` that reads the collection, say) runs on it,
    /// since GRDB's queue must not be entered twice (it stops the process). Read and written
    /// under `gate`.
    nonisolated(unsafe) private var inUse: Database?
    /// Held for the whole of ``close()``: a second call returns once the first is done.
    private let closing = NSLock()
    /// What ``close()`` stops besides the queue: each collection's running subscriptions.
    private let stops = Locked<[@Sendable () -> Void]>([])
    /// Where long writes run (``writingApart(_:)``); `nil`: on the calling thread.
    private let apart: DispatchQueue?

    /// Opens (or creates) the store in the file at `path`, which no other store may hold open
    /// (``close()`` releases it).
    ///
    /// - Parameters:
    ///   - path: The SQLite file; its folder must exist.
    ///   - policy: How sending changes retries (its backoff); a change is never given up on for
    ///     a transient failure, only refused by the server.
    ///   - clock: The clock the retries wait on.
    ///   - clientID: The client id of a new file (a new random one when `nil`); a file that
    ///     holds one keeps it.
    ///   - blocking: Whether long writes (a first sync's pages) run on the calling thread,
    ///     rather than on a thread of their own: in a simulation (StateLoopSimulation), whose
    ///     steps must all run on its one thread.
    public convenience init(
        path: String, policy: ResourcePolicy = ResourcePolicy(), clock: any Clock<Duration> = ContinuousClock(), clientID: ClientID? = nil,
        blocking: Bool = false
    ) throws {
        var configuration = Configuration()
        configuration.label = "StateLoopCollections"
        // One store per file: a second one (another process, or a relaunch before the first
        // was closed) would send the same queue twice, out of order. The lock tells it at once.
        configuration.busyMode = .immediateError
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA locking_mode = EXCLUSIVE")
            _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        try self.init(
            database: DatabaseQueue(path: path, configuration: configuration), policy: policy, clock: clock, clientID: clientID, blocking: blocking)
    }

    /// A store in memory, gone with the process: for tests, previews and simulations.
    ///
    /// - Parameters:
    ///   - policy: How sending changes retries.
    ///   - clock: The clock the retries wait on.
    ///   - clientID: The store's client id (a new random one when `nil`).
    ///   - blocking: Whether long writes run on the calling thread (see
    ///     ``init(path:policy:clock:clientID:blocking:)``).
    public static func inMemory(
        policy: ResourcePolicy = ResourcePolicy(), clock: any Clock<Duration> = ContinuousClock(), clientID: ClientID? = nil, blocking: Bool = false
    ) throws -> LocalStore {
        try LocalStore(database: DatabaseQueue(), policy: policy, clock: clock, clientID: clientID, blocking: blocking)
    }

    private init(database: DatabaseQueue, policy: ResourcePolicy, clock: any Clock<Duration>, clientID newClient: ClientID?, blocking: Bool) throws {
        try Self.migrator.migrate(database)
        self.database = database
        self.policy = policy
        self.clock = clock
        apart = blocking ? nil : DispatchQueue(label: "StateLoopCollections.LocalStore.apart")
        clientID = try database.write { db in
            if let stored = try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'client'") { return ClientID(rawValue: stored) }
            let client = newClient ?? ClientID()
            try db.execute(sql: "INSERT INTO meta (key, value) VALUES ('client', ?)", arguments: [client.rawValue])
            return client
        }
        queue = MutationQueue(policy: policy, clock: clock)
    }

    /// The local collection `declaration`, whose rows the app changes with `mutations`, sent by
    /// `send` (StateLoopSyncTransports: `SyncEndpoint.rowMutations(at:for:)`); `nil` for one the
    /// app only reads. One per collection name and store.
    public func collection<Row, M: RowMutation>(
        _ declaration: RowCollection<Row>, mutations: M.Type = M.self,
        send: (@Sendable (M, MutationID) async throws -> Version)? = nil
    ) -> LocalCollection<Row, M> where M.Row == Row {
        let collection = LocalCollection<Row, M>(declaration, store: self)
        queue.register(declaration.name, collection: collection, send: send)
        stops.withLock { $0.append { [weak collection] in collection?.storeClosed() } }
        return collection
    }

    deinit {
        // The sending loop may still hold the file a moment: released now, for the next store.
        queue.stop()
        try? database.close()
    }

    /// Stops sending, closes every subscription's socket and closes the file: what an app does
    /// as it quits, or a test's relaunch. The store's collections and subscriptions do nothing
    /// after it, and what the app asks of them throws ``LocalStoreClosedError``. If the file
    /// could not be closed, calling it again tries again.
    public func close() throws {
        closing.lock()
        defer { closing.unlock() }
        let first = gate.withLock {
            defer { closed = true }
            return !closed
        }
        if first {
            queue.stop()
            // Outside the gate: a subscription cancelled may be waiting for it to apply a message.
            for stop in stops.withLock({ $0 }) { stop() }
        }
        try gate.withLock { try database.close() }
    }

    /// Runs `body`, a long use of the store (a first sync's page, thousands of rows), on a
    /// thread of its own, and waits for it without holding a thread of Swift's concurrency:
    /// those are as many as the cores, and meanwhile they fetch and decode the next page (run on
    /// one of them, the write held it, and on two cores the next page waited for the write).
    func writingApart<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        guard let apart else { return try body() }
        return try await withCheckedThrowingContinuation { continuation in
            apart.async { continuation.resume(with: Result(catching: body)) }
        }
    }

    /// Whether ``close()`` was called.
    var isClosed: Bool {
        gate.lock()
        defer { gate.unlock() }
        return closed
    }

    /// Reads the file, unless the store was closed. Inside another use of the file, on its
    /// connection and in its transaction.
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        gate.lock()
        defer { gate.unlock() }
        guard !closed else { throw LocalStoreClosedError() }
        if let inUse { return try body(inUse) }
        return try database.read { db in try using(db, body) }
    }

    /// Writes to the file in one transaction, unless the store was closed. Inside another use
    /// of the file (an app's `RowMutation.apply(to:)` changing a collection), it throws
    /// ``NestedWriteError``: its changes and what it tells its watchers would belong to a
    /// transaction that may still roll back.
    func write<T>(_ body: (Database) throws -> T) throws -> T {
        gate.lock()
        defer { gate.unlock() }
        guard !closed else { throw LocalStoreClosedError() }
        guard inUse == nil else { throw NestedWriteError() }
        return try database.write { db in try using(db, body) }
    }

    private func using<T>(_ db: Database, _ body: (Database) throws -> T) throws -> T {
        inUse = db
        defer { inUse = nil }
        return try body(db)
    }

    /// A change of the store asked for from inside another use of it, on the same thread.
    struct NestedWriteError: Error, CustomStringConvertible {
        var description: String {
            "a local collection was changed from inside a use of its store (a RowMutation's apply(to:)?): a change writes through the RowEdits it is given"
        }
    }

    /// The store's schema.
    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("collections-1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                    CREATE TABLE rows (
                        collection TEXT NOT NULL, id TEXT NOT NULL, epoch INTEGER NOT NULL, counter INTEGER NOT NULL,
                        json BLOB NOT NULL, fields TEXT NOT NULL, PRIMARY KEY (collection, id)) WITHOUT ROWID;
                    CREATE TABLE subscriptions (
                        key TEXT PRIMARY KEY, collection TEXT NOT NULL, cookie TEXT, last_mutation_id INTEGER,
                        refused INTEGER NOT NULL DEFAULT 0);
                    CREATE TABLE members (
                        subscription TEXT NOT NULL, collection TEXT NOT NULL, id TEXT NOT NULL,
                        PRIMARY KEY (subscription, id)) WITHOUT ROWID;
                    CREATE INDEX members_by_row ON members (collection, id);
                    CREATE TABLE mutations (
                        sequence INTEGER PRIMARY KEY, collection TEXT NOT NULL, mutation BLOB NOT NULL,
                        answered INTEGER NOT NULL DEFAULT 0);
                    """)
        }
        migrator.registerMigration("collections-2") { db in
            // Stopped by the app (not by the store's closing): see LocalCollection.paused(_:).
            try db.execute(sql: "ALTER TABLE subscriptions ADD COLUMN paused INTEGER NOT NULL DEFAULT 0")
        }
        migrator.registerMigration("collections-3") { db in
            // The rows that left the device, with the version they had and the position of the
            // answer that took them off: see LocalCollection.apply(_:requestedWith:to:).
            try db.execute(
                sql: """
                    CREATE TABLE departed (
                        collection TEXT NOT NULL, id TEXT NOT NULL, epoch INTEGER NOT NULL, counter INTEGER NOT NULL,
                        cookie_epoch INTEGER NOT NULL, position INTEGER NOT NULL, PRIMARY KEY (collection, id)) WITHOUT ROWID
                    """)
        }
        migrator.registerMigration("collections-4") { db in
            // A row's holders are looked up through the subscriptions of its collection (a few),
            // by the members' key: this index cost each row of a first sync a third write.
            try db.execute(sql: "DROP INDEX IF EXISTS members_by_row")
        }
        return migrator
    }

    /// The next change's sequence number: one more than any this client sent, across launches.
    func nextSequence(_ db: Database) throws -> UInt64 {
        let last = try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'sequence'").flatMap { UInt64($0) } ?? 0
        try db.execute(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('sequence', ?)", arguments: [String(last + 1)])
        return last + 1
    }
}

/// What a local store's collections throw once the store was closed (``LocalStore/close()``):
/// open the file again with a new ``LocalStore``.
public struct LocalStoreClosedError: Error, CustomStringConvertible {
    public var description: String {
        "the local store was closed: open its file again with LocalStore(path:) to go on"
    }
}
