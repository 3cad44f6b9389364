import Foundation
import GRDB
import StateLoopWire
import Synchronization

/// The embedded ``ServerStore``: one SQLite file (through GRDB), no setup.
///
/// ```swift
/// let store = try SQLiteStore(path: dataFolder + "/server.sqlite")
/// ```
///
/// Threading: GRDB's `DatabasePool` runs one write at a time on its writer queue and reads
/// beside it (WAL). Commit observers are called on the writer queue right after each commit,
/// before the next write starts, which is what keeps the change feed in commit order.
public final class SQLiteStore: ServerStore {
    /// How much a commit survives.
    public enum Durability: Sendable {
        /// A commit survives the end of the process (SIGKILL included), not a power cut:
        /// SQLite's `synchronous = NORMAL` in WAL mode, no fsync per commit.
        case processCrash
        /// A commit survives a power cut: `synchronous = FULL`, an fsync per commit.
        case powerLoss
    }

    /// The file, or `nil` for an in-memory store.
    public let path: String?
    /// The epoch stored in the file: the same on every open, until a restore or
    /// ``startNewEpoch(at:)``.
    public let epoch: UInt64
    private let writer: any DatabaseWriter
    private let observers = Mutex<[@Sendable (CommittedChanges) -> Void]>([])

    /// Opens or creates the store at `path`, creating its tables and, on first use, its epoch.
    ///
    /// - Throws: GRDB's `DatabaseError` when the file cannot be opened or is not a store.
    public init(path: String, durability: Durability = .powerLoss) throws {
        var configuration = Configuration()
        configuration.label = "StateLoopServer"
        // A second process on the same file waits for the lock rather than failing at once.
        configuration.busyMode = .timeout(5)
        self.path = path
        let pool = try DatabasePool(path: path, configuration: configuration)
        // After opening: the pool sets NORMAL on its writer once the configuration's own
        // preparation has run, and the writer connection lives as long as the pool.
        if durability == .powerLoss {
            try pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = FULL") }
        }
        writer = pool
        epoch = try Self.prepare(pool)
    }

    /// A throwaway store in memory: everything is gone when it is released. Its versions are in
    /// `epoch` (by default the current millisecond, later than any earlier store's): a server
    /// that replaces a lost store gives its clients a later epoch, so they re-bootstrap.
    public init(epoch: UInt64? = nil) throws {
        path = nil
        let queue = try DatabaseQueue()
        writer = queue
        self.epoch = try Self.prepare(queue, epoch: epoch)
    }

    /// Starts a new epoch in the file at `path`: run it after restoring the file from a backup,
    /// before any server opens it, so that clients drop what they hold and take the restored
    /// values (whose counters may be lower than those they have seen). Returns the new epoch.
    @discardableResult
    public static func startNewEpoch(at path: String) throws -> UInt64 {
        let pool = try DatabaseQueue(path: path)
        _ = try prepare(pool)
        return try pool.write { db in
            let old = try UInt64.fetchOne(db, sql: "SELECT value FROM stateloop_meta WHERE key = 'epoch'") ?? 0
            let epoch = max(old + 1, Self.millisecondsNow())
            try db.execute(sql: "UPDATE stateloop_meta SET value = ? WHERE key = 'epoch'", arguments: [Int64(epoch)])
            return epoch
        }
    }

    /// Copies the store at `backup` over the store at `path` and starts a new epoch in it: the
    /// restored history is not the one clients followed. Nothing may have `path` open.
    ///
    /// The copy gets its new epoch before it takes the place of the store, so a crash during the
    /// restore leaves either the old store or the restored one with its new epoch, never
    /// restored values under an epoch clients have seen higher counters in.
    @discardableResult
    public static func restore(from backup: String, to path: String) throws -> UInt64 {
        let staging = path + ".restoring"
        let files = FileManager.default
        for suffix in ["", "-wal", "-shm"] { try? files.removeItem(atPath: staging + suffix) }
        var readOnly = Configuration()
        readOnly.readonly = true
        let source = try DatabaseQueue(path: backup, configuration: readOnly)
        let destination = try DatabaseQueue(path: staging)
        try source.backup(to: destination)
        try source.close()
        try destination.close()
        let epoch = try startNewEpoch(at: staging)
        for suffix in ["-wal", "-shm"] { try? files.removeItem(atPath: path + suffix) }
        if rename(staging, path) != 0 {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        return epoch
    }

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction; observers are told before the next
    /// write starts.
    public func write<Result: Sendable>(_ body: @Sendable (any StoreTransaction) throws -> Result) async throws -> Result {
        let epoch = self.epoch
        return try await writer.writeWithoutTransaction { db in
            let transaction = SQLiteTransaction(db: db, epoch: epoch)
            var result: Result?
            try db.inTransaction(.immediate) {
                result = try body(transaction)
                return .commit
            }
            let changes = transaction.committedChanges
            if !changes.isEmpty {
                for observer in self.observers.withLock({ $0 }) { observer(changes) }
            }
            return result!
        }
    }

    /// Reads the value and the client's progress in one read transaction (one WAL snapshot).
    public func read(_ key: ResourceKey, lastMutationIDOf client: ClientID?, scope: String) async throws -> (value: StoredValue?, lastMutationID: UInt64?) {
        let epoch = self.epoch
        return try await writer.read { db in
            let transaction = SQLiteTransaction(db: db, epoch: epoch)
            let value = try transaction.value(of: key)
            let lastMutationID = try client.flatMap { try transaction.lastMutationID(of: $0, scope: scope) }
            return (value, lastMutationID)
        }
    }

    /// Forgets the clients that processed no mutation since `cutoff`, with their last answers.
    public func forgetClients(idleSince cutoff: Date) async throws -> Int {
        let milliseconds = Int64(max(0, cutoff.timeIntervalSince1970 * 1_000))
        return try await writer.write { db in
            try db.execute(
                sql: """
                    DELETE FROM stateloop_answers WHERE (scope, client) IN
                        (SELECT scope, client FROM stateloop_clients WHERE last_seen < ?)
                    """,
                arguments: [milliseconds]
            )
            try db.execute(sql: "DELETE FROM stateloop_clients WHERE last_seen < ?", arguments: [milliseconds])
            return db.changesCount
        }
    }

    /// Adds an observer of every later commit.
    public func observeCommits(_ observer: @escaping @Sendable (CommittedChanges) -> Void) {
        observers.withLock { $0.append(observer) }
    }

    /// Creates the tables and the epoch if needed; returns the epoch.
    private static func prepare(_ writer: any DatabaseWriter, epoch: UInt64? = nil) throws -> UInt64 {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("stateloop-server-1") { db in
            try db.execute(sql: """
                CREATE TABLE stateloop_meta (key TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL);
                CREATE TABLE stateloop_values (
                    resource TEXT NOT NULL, id TEXT NOT NULL, counter INTEGER NOT NULL, json BLOB NOT NULL,
                    PRIMARY KEY (resource, id)) WITHOUT ROWID;
                CREATE TABLE stateloop_answers (
                    scope TEXT NOT NULL, mutation TEXT NOT NULL, client TEXT, sequence INTEGER,
                    fingerprint INTEGER NOT NULL, status INTEGER NOT NULL, body BLOB NOT NULL,
                    PRIMARY KEY (scope, mutation)) WITHOUT ROWID;
                CREATE INDEX stateloop_answers_by_client ON stateloop_answers (scope, client, sequence);
                CREATE TABLE stateloop_clients (
                    scope TEXT NOT NULL, client TEXT NOT NULL, last_sequence INTEGER NOT NULL, last_seen INTEGER NOT NULL,
                    PRIMARY KEY (scope, client)) WITHOUT ROWID;
                """)
            try db.execute(sql: "INSERT INTO stateloop_meta (key, value) VALUES ('epoch', ?)", arguments: [Int64(epoch ?? millisecondsNow())])
        }
        try migrator.migrate(writer)
        return try writer.read { db in
            try UInt64.fetchOne(db, sql: "SELECT value FROM stateloop_meta WHERE key = 'epoch'") ?? 1
        }
    }

    /// Milliseconds since 1970: a new epoch is later than any earlier one, even one started in
    /// the same second.
    static func millisecondsNow() -> UInt64 {
        UInt64(max(1, Date().timeIntervalSince1970 * 1_000))
    }
}

/// One SQLite transaction of a ``SQLiteStore``, which records what it changed for the change
/// feed. Used only on GRDB's queue, inside the transaction.
final class SQLiteTransaction: StoreTransaction {
    let db: Database
    let epoch: UInt64
    private var written: [ResourceKey: StoredValue] = [:]
    private var writeOrder: [ResourceKey] = []
    private var progress: [ClientProgress] = []

    init(db: Database, epoch: UInt64) {
        self.db = db
        self.epoch = epoch
    }

    var committedChanges: CommittedChanges {
        CommittedChanges(values: writeOrder.compactMap { written[$0] }, progress: progress)
    }

    func value(of key: ResourceKey) throws -> StoredValue? {
        let row = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT counter, json FROM stateloop_values WHERE resource = ? AND id = ?"), arguments: [key.resource, key.id]
        )
        return row.map { StoredValue(key: key, version: Version(epoch: epoch, counter: UInt64($0["counter"] as Int64)), json: $0["json"]) }
    }

    func values(of resource: String, prefix: String, after cursor: String?, limit: Int, descending: Bool) throws -> [StoredValue] {
        // The ids from `prefix` up to `prefix` followed by the highest scalar: a range the
        // primary key's index answers, where a LIKE or substr() would scan.
        var conditions = "resource = ? AND id >= ? AND id < ?"
        var arguments: StatementArguments = [resource, prefix, prefix + "\u{10FFFF}"]
        if let cursor {
            conditions += descending ? " AND id < ?" : " AND id > ?"
            arguments += [cursor]
        }
        arguments += [max(0, limit)]
        let rows = try Row.fetchAll(
            db.cachedStatement(
                sql: "SELECT id, counter, json FROM stateloop_values WHERE \(conditions) ORDER BY id \(descending ? "DESC" : "ASC") LIMIT ?"
            ),
            arguments: arguments
        )
        return rows.map { row in
            StoredValue(
                key: ResourceKey(resource: resource, id: row["id"]),
                version: Version(epoch: epoch, counter: UInt64(row["counter"] as Int64)), json: row["json"]
            )
        }
    }

    func write(_ json: Data, to key: ResourceKey) throws -> Version {
        // An upsert, then a read of the counter (not RETURNING, which SQLite before 3.35 lacks).
        // Statements are prepared once per connection: a server-side change can write thousands.
        try db.cachedStatement(
            sql: """
                INSERT INTO stateloop_values (resource, id, counter, json) VALUES (?, ?, 1, ?)
                ON CONFLICT (resource, id) DO UPDATE SET counter = counter + 1, json = excluded.json
                """
        ).execute(arguments: [key.resource, key.id, json])
        let counter = try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT counter FROM stateloop_values WHERE resource = ? AND id = ?"), arguments: [key.resource, key.id]
        ) ?? 1
        let version = Version(epoch: epoch, counter: UInt64(counter))
        if written[key] == nil { writeOrder.append(key) }
        written[key] = StoredValue(key: key, version: version, json: json)
        return version
    }

    func answer(to mutation: String, scope: String) throws -> RememberedAnswer? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT fingerprint, status, body FROM stateloop_answers WHERE scope = ? AND mutation = ?"),
            arguments: [scope, mutation]
        ).map { row in
            RememberedAnswer(fingerprint: UInt64(bitPattern: row["fingerprint"]), status: row["status"], body: row["body"])
        }
    }

    func remember(_ answer: RememberedAnswer, to mutation: String, scope: String, client: ClientID?, sequence: UInt64?) throws {
        try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO stateloop_answers (scope, mutation, client, sequence, fingerprint, status, body)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(
            arguments: [scope, mutation, client?.rawValue, sequence.map { Int64(bitPattern: $0) },
                        Int64(bitPattern: answer.fingerprint), answer.status, answer.body]
        )
    }

    func lastMutationID(of client: ClientID, scope: String) throws -> UInt64? {
        try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT last_sequence FROM stateloop_clients WHERE scope = ? AND client = ?"),
            arguments: [scope, client.rawValue]
        ).map { UInt64(bitPattern: $0) }
    }

    func setLastMutationID(_ sequence: UInt64, of client: ClientID, scope: String) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO stateloop_clients (scope, client, last_sequence, last_seen) VALUES (?, ?, ?, ?)
                ON CONFLICT (scope, client) DO UPDATE
                SET last_sequence = max(last_sequence, excluded.last_sequence), last_seen = excluded.last_seen
                """
        ).execute(arguments: [scope, client.rawValue, Int64(bitPattern: sequence), Int64(SQLiteStore.millisecondsNow())])
        try db.cachedStatement(
            sql: "DELETE FROM stateloop_answers WHERE scope = ? AND client = ? AND sequence < ?"
        ).execute(arguments: [scope, client.rawValue, Int64(bitPattern: sequence)])
        let newest = try lastMutationID(of: client, scope: scope) ?? sequence
        progress.removeAll { $0.scope == scope && $0.client == client }
        progress.append(ClientProgress(scope: scope, client: client, lastMutationID: newest))
    }
}
