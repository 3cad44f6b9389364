import Foundation
import GRDB
import Logging
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
///
/// History that goes back: beside the file the store keeps a high-water mark
/// (``highWaterMarkPath``: the change feed's newest position, the epoch and the file's random
/// generation), rewritten after each commit before its versions leave the store. When the
/// store opens a file whose feed is behind its mark (an older copy put back in its place), it
/// starts a new epoch by itself, logs it and says why in ``epochRestart``: the counters after
/// the copy's were handed out before, perhaps with other values.
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
    /// The epoch stored in the file: the same on every open, until a restore,
    /// ``startNewEpoch(at:now:)``, or an open that finds the file behind its high-water mark
    /// (``epochRestart``).
    public let epoch: UInt64
    /// The new epoch the store began as it opened, because the file's history was behind its
    /// high-water mark (a restored copy); `nil` when it kept the file's epoch.
    public let epochRestart: EpochRestart?
    /// The high-water mark beside the file (`path` followed by `-highwater`), `nil` in memory.
    /// Leave it in place when you put an older copy of the data file back: it is what tells
    /// the store that the copy is older. It is not part of a backup.
    public var highWaterMarkPath: String? { mark?.path }
    private let writer: any DatabaseWriter
    /// Whether transactions run on the calling thread (see ``init(epoch:now:blocking:)``).
    private let blocking: Bool
    /// The high-water mark, rewritten after each commit that fed the change feed.
    private let mark: HighWaterMark?
    /// The file's generation, written into every mark (0 in memory).
    private let generation: UInt64
    private let logger: Logger
    /// The clock that times commits in the change feed.
    private let now: @Sendable () -> Date
    private let observers = Mutex<[@Sendable (CommittedChanges) -> Void]>([])

    /// Opens or creates the store at `path`, creating its tables and, on first use, its epoch.
    ///
    /// Compares the file with its high-water mark first, in one write transaction (so that two
    /// processes opening it at once start one new epoch at most), and starts a new epoch when
    /// the file's history is behind the mark (``epochRestart``).
    ///
    /// - Parameters:
    ///   - path: The data file, created if it does not exist; its high-water mark is kept
    ///     beside it (``highWaterMarkPath``).
    ///   - durability: What a commit survives.
    ///   - now: The clock that times commits in the change feed (a server's own clock in tests).
    ///   - logger: Where a new epoch begun at open, or a mark that cannot be written, is told.
    /// - Throws: ``OpenFailure`` saying what is wrong: the folder does not exist or cannot be
    ///   written, the file is not a SQLite database, another process holds it, the disk is full,
    ///   or the high-water mark cannot be written.
    public init(
        path: String, durability: Durability = .powerLoss, now: @escaping @Sendable () -> Date = { Date() },
        logger: Logger = Logger(label: "stateloop.sqlite")
    ) throws {
        var configuration = Configuration()
        configuration.label = "StateLoopServer"
        // A second process on the same file waits for the lock rather than failing at once.
        configuration.busyMode = .timeout(5)
        self.path = path
        self.now = now
        let pool: DatabasePool
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
            // After opening: the pool sets NORMAL on its writer once the configuration's own
            // preparation has run, and the writer connection lives as long as the pool.
            if durability == .powerLoss {
                try pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = FULL") }
            }
            _ = try Self.prepare(pool)
        } catch let error as DatabaseError {
            throw OpenFailure(error, path: path)
        }
        writer = pool
        blocking = false
        self.logger = logger
        let mark: HighWaterMark
        do {
            mark = try HighWaterMark(path: HighWaterMark.path(for: path))
        } catch {
            throw OpenFailure(description: "cannot keep the high-water mark beside \(path) (\(HighWaterMark.path(for: path))): \(error)")
        }
        let checked = try Self.checkHistory(pool, mark: mark, now: now())
        epoch = checked.record.epoch
        generation = checked.record.generation
        epochRestart = checked.restart
        if let restart = checked.restart {
            logger.warning("SQLite store \(path): \(restart)")
        }
        self.mark = mark
    }

    /// A throwaway store in memory: everything is gone when it is released.
    ///
    /// - Parameters:
    ///   - epoch: The epoch of its versions; by default the current millisecond, later than any
    ///     earlier store's: a server that replaces a lost store gives its clients a later
    ///     epoch, so they re-bootstrap.
    ///   - now: The clock that times commits in the change feed.
    ///   - blocking: Runs every transaction on the calling thread, which waits for it, instead
    ///     of on the store's own queue. For a simulation (StateLoopSimulation), where every job
    ///     must run on its one thread for a seed to replay; a server would hold up a thread of
    ///     Swift's pool for each transaction.
    public init(epoch: UInt64? = nil, now: @escaping @Sendable () -> Date = { Date() }, blocking: Bool = false) throws {
        path = nil
        self.now = now
        self.blocking = blocking
        let queue = try DatabaseQueue()
        writer = queue
        self.epoch = try Self.prepare(queue, epoch: epoch)
        epochRestart = nil
        mark = nil
        generation = 0
        logger = Logger(label: "stateloop.sqlite")
    }

    /// A copy of a store taken between two transactions (``backup()``), from which a store in
    /// memory is restored (``init(restoring:after:now:blocking:)``).
    public struct Backup: Sendable {
        let copy: DatabaseQueue
        /// The epoch of the store when the copy was taken.
        public let epoch: UInt64
    }

    /// A copy of the store as it is now, in memory: what a simulation or a test puts back
    /// later, as an operator puts back a backup.
    public func backup() throws -> Backup {
        let copy = try DatabaseQueue()
        try writer.backup(to: copy)
        return Backup(copy: copy, epoch: epoch)
    }

    /// A store in memory restored from `backup`: its values, history and clients' progress as
    /// they were when it was taken, in a new epoch later than `lostEpoch` (the epoch the lost
    /// store had reached) and than the backup's, so that clients drop the versions they hold
    /// and take the restored values, whose counters may be lower than those they have seen.
    /// The new epoch is the store's clock `now` in milliseconds when that is later still, as
    /// at any new epoch; every value gets an entry at its new version in the change feed.
    ///
    /// - Parameters:
    ///   - backup: What ``backup()`` took.
    ///   - lostEpoch: The epoch of the store the restore replaces.
    ///   - now: The clock that times commits in the change feed, and the new epoch.
    ///   - blocking: Whether transactions run on the calling thread (see
    ///     ``init(epoch:now:blocking:)``).
    public init(restoring backup: Backup, after lostEpoch: UInt64, now: @escaping @Sendable () -> Date = { Date() }, blocking: Bool = false)
        throws
    {
        path = nil
        self.now = now
        self.blocking = blocking
        let queue = try DatabaseQueue()
        try backup.copy.backup(to: queue)
        let date = now()
        epoch = try queue.write { db in
            try Self.beginEpoch(
                in: db, after: max(lostEpoch, backup.epoch), now: date, millisecondsNow: UInt64(max(1, date.timeIntervalSince1970 * 1_000)))
        }
        writer = queue
        epochRestart = nil
        mark = nil
        generation = 0
        logger = Logger(label: "stateloop.sqlite")
    }

    /// Starts a new epoch in the file at `path`: run it after restoring the file from a backup,
    /// before any server opens it, so that clients drop what they hold and take the restored
    /// values (whose counters may be lower than those they have seen). Returns the new epoch.
    ///
    /// Every value then has a new version (the new epoch, the same counter): the change feed
    /// gets an entry for each, timed by `now`, so that its history names the versions clients
    /// will see.
    ///
    /// A store that opens a restored file with its high-water mark still beside it begins the
    /// new epoch by itself (``epochRestart``); this is for a file whose mark is gone (restored
    /// onto another machine, say). The new epoch is later than the mark's too.
    @discardableResult
    public static func startNewEpoch(at path: String, now: Date = Date()) throws -> UInt64 {
        try startNewEpoch(at: path, now: now, markOf: path)
    }

    /// ``startNewEpoch(at:now:)``, later than the epoch of the mark of the file at `markOf` too
    /// when the mark is that file's (`restore(from:to:)` starts the epoch in a staging copy
    /// before it takes the file's place).
    private static func startNewEpoch(at path: String, now: Date, markOf markedPath: String) throws -> UInt64 {
        let pool = try DatabaseQueue(path: path)
        _ = try prepare(pool)
        return try pool.write { db in
            var floor = try UInt64.fetchOne(db, sql: "SELECT value FROM stateloop_meta WHERE key = 'epoch'") ?? 0
            if case .record(let mark) = HighWaterMark.read(at: HighWaterMark.path(for: markedPath)), try mark.generation == fileGeneration(db) {
                floor = max(floor, mark.epoch)
            }
            return try beginEpoch(in: db, after: floor, now: now)
        }
    }

    /// Stores a new epoch, later than `floor` and than any epoch begun before this
    /// millisecond, and adds every value to the change feed at its new version (one commit):
    /// the feed's history names the versions clients will see. Returns the epoch.
    private static func beginEpoch(
        in db: Database, after floor: UInt64, now: Date, millisecondsNow: UInt64 = StoreClock.millisecondsNow()
    ) throws -> UInt64 {
        let epoch = max(floor + 1, millisecondsNow)
        try db.execute(sql: "UPDATE stateloop_meta SET value = ? WHERE key = 'epoch'", arguments: [Int64(epoch)])
        try db.execute(
            sql: """
                INSERT INTO stateloop_changes (commit_seq, committed_at, resource, id, epoch, counter, json)
                SELECT 0, ?, resource, id, ?, counter, json FROM stateloop_values ORDER BY resource, id
                """,
            arguments: [StoreClock.microseconds(now), Int64(epoch)]
        )
        try db.execute(
            sql: "UPDATE stateloop_changes SET commit_seq = (SELECT min(seq) FROM stateloop_changes WHERE commit_seq = 0) WHERE commit_seq = 0")
        return epoch
    }

    /// The file's generation: a random number the file keeps for ever, written into each of
    /// its marks, so that a mark is only compared with the file it was written for (or a copy
    /// of it).
    private static func fileGeneration(_ db: Database) throws -> UInt64 {
        UInt64(bitPattern: try Int64.fetchOne(db, sql: "SELECT value FROM stateloop_meta WHERE key = 'generation'") ?? 0)
    }

    /// Compares the file with `mark` in one `BEGIN IMMEDIATE` transaction (the mark read
    /// under the file's write lock: no other process commits, and marks, between the two
    /// reads), starts a new epoch if the file's history is behind the mark, and rewrites the
    /// mark, flushed to the disk, before the transaction commits: the mark is never left
    /// behind what the file holds by an open racing another process's commit, and if the
    /// commit fails the mark is ahead, which costs at most one more new epoch. Returns what
    /// the mark says now, and the restart if there was one.
    ///
    /// A missing mark, or one written for another file (another generation), is no
    /// information: nothing to compare, no new epoch. A file whose epoch is later than the
    /// mark's was given a new epoch while the store was closed (``startNewEpoch(at:now:)``):
    /// nothing to do either.
    private static func checkHistory(
        _ writer: any DatabaseWriter, mark markFile: HighWaterMark, now: Date
    ) throws -> (record: HighWaterMark.Record, restart: EpochRestart?) {
        try writer.writeWithoutTransaction { db in
            var checked: (record: HighWaterMark.Record, restart: EpochRestart?)?
            try db.inTransaction(.immediate) {
                let generation = try fileGeneration(db)
                let epoch = try UInt64.fetchOne(db, sql: "SELECT value FROM stateloop_meta WHERE key = 'epoch'") ?? 1
                let newest = try newestEntry(db)
                var reason: EpochRestart.Reason?
                var floor = epoch
                switch HighWaterMark.read(at: markFile.path) {
                case .missing:
                    break
                case .unreadable:
                    reason = .unreadableMark
                case .record(let mark) where mark.generation != generation || epoch > mark.epoch:
                    break
                case .record(let mark):
                    floor = max(epoch, mark.epoch)
                    if epoch < mark.epoch {
                        reason = .epochBehindMark(epoch: epoch, mark: mark.epoch)
                    } else if newest.position < mark.position {
                        reason = .feedBehindMark(position: newest.position, mark: mark.position)
                    } else if mark.position > 0,
                        let time = try Int64.fetchOne(
                            db, sql: "SELECT committed_at FROM stateloop_changes WHERE seq = ?", arguments: [Int64(clamping: mark.position)]
                        ), time != mark.time
                    {
                        // A pruned entry cannot be compared; one that is there must be the
                        // one the mark saw.
                        reason = .feedDiverged(position: mark.position)
                    }
                }
                if let reason {
                    let begun = try beginEpoch(in: db, after: floor, now: now)
                    let after = try newestEntry(db)
                    checked = (
                        HighWaterMark.Record(generation: generation, epoch: begun, position: after.position, time: after.time),
                        EpochRestart(previousEpoch: epoch, epoch: begun, reason: reason)
                    )
                } else {
                    checked = (HighWaterMark.Record(generation: generation, epoch: epoch, position: newest.position, time: newest.time), nil)
                }
                try markFile.write(checked!.record, sync: true)
                return .commit
            }
            return checked!
        }
    }

    /// The change feed's newest position and its commit time; zeros for an empty feed.
    private static func newestEntry(_ db: Database) throws -> (position: UInt64, time: Int64) {
        let row = try Row.fetchOne(db, sql: "SELECT seq, committed_at FROM stateloop_changes ORDER BY seq DESC LIMIT 1")
        return row.map { (UInt64($0["seq"] as Int64), $0["committed_at"] as Int64) } ?? (0, 0)
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
        let epoch = try startNewEpoch(at: staging, now: Date(), markOf: path)
        for suffix in ["-wal", "-shm"] { try? files.removeItem(atPath: path + suffix) }
        if rename(staging, path) != 0 {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        return epoch
    }

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction; observers are told before the next
    /// write starts.
    public func write<Result: Sendable>(_ body: @Sendable (any StoreTransaction) throws -> Result) async throws -> Result {
        let (epoch, now) = (self.epoch, self.now)
        return try await withWriter { db in
            let transaction = SQLiteTransaction(db: db, epoch: epoch, now: now)
            var result: Result?
            try db.inTransaction(.immediate) {
                result = try body(transaction)
                return .commit
            }
            let changes = transaction.committedChanges
            if let feed = changes.feed {
                // Before the observers and the answer: no version of this commit leaves the
                // store before the mark covers it.
                self.recordMark(position: feed.upperBound, time: changes.time)
            }
            if !changes.isEmpty {
                for observer in self.observers.withLock({ $0 }) { observer(changes) }
            }
            return result!
        }
    }

    /// Runs `body` on the writer connection outside any transaction: on the store's queue, or
    /// on the calling thread when the store is ``blocking``.
    private func withWriter<T: Sendable>(_ body: @Sendable (Database) throws -> T) async throws -> T {
        guard blocking else { return try await writer.writeWithoutTransaction(body) }
        // Called from a synchronous function: there, only GRDB's blocking call applies.
        func now(_ writer: any DatabaseWriter) throws -> T { try writer.writeWithoutTransaction(body) }
        return try now(writer)
    }

    /// Runs `body` in one write transaction (see ``withWriter(_:)``).
    private func inTransaction<T: Sendable>(_ body: @Sendable (Database) throws -> T) async throws -> T {
        guard blocking else { return try await writer.write(body) }
        func now(_ writer: any DatabaseWriter) throws -> T { try writer.write(body) }
        return try now(writer)
    }

    /// Runs `body` in one read transaction (see ``withWriter(_:)``).
    private func withReader<T: Sendable>(_ body: @Sendable (Database) throws -> T) async throws -> T {
        guard blocking else { return try await writer.read(body) }
        func now(_ writer: any DatabaseWriter) throws -> T { try writer.read(body) }
        return try now(writer)
    }

    /// Moves the high-water mark to the feed position `position`, committed at `time`. A mark
    /// that cannot be written is logged, not thrown: the commit is made, and its observers and
    /// its caller must hear of it; the mark then lags, which only weakens the check at the next
    /// open (which rewrites it).
    private func recordMark(position: UInt64, time: Date) {
        guard let mark else { return }
        do {
            try mark.write(HighWaterMark.Record(generation: generation, epoch: epoch, position: position, time: StoreClock.microseconds(time)))
        } catch {
            logger.error("SQLite store \(path ?? "in memory"): the high-water mark \(mark.path) could not be written: \(error)")
        }
    }

    /// Runs `body` in one read transaction (one WAL snapshot), beside the writer; SQLite refuses
    /// any write in it.
    public func read<Result: Sendable>(_ body: @Sendable (any StoreTransaction) throws -> Result) async throws -> Result {
        let (epoch, now) = (self.epoch, self.now)
        return try await withReader { db in try body(SQLiteTransaction(db: db, epoch: epoch, now: now)) }
    }

    /// Reads the value and the client's progress in one read transaction (one WAL snapshot).
    public func read(_ key: ResourceKey, lastMutationIDOf client: ClientID?, scope: String) async throws -> (
        value: StoredValue?, lastMutationID: UInt64?
    ) {
        let epoch = self.epoch
        return try await withReader { db in
            let transaction = SQLiteTransaction(db: db, epoch: epoch)
            let value = try transaction.value(of: key)
            let lastMutationID = try client.flatMap { try transaction.lastMutationID(of: $0, scope: scope) }
            return (value, lastMutationID)
        }
    }

    /// Forgets the clients that processed no mutation since `cutoff`, with their last answers.
    public func forgetClients(idleSince cutoff: Date) async throws -> Int {
        let milliseconds = Int64(max(0, cutoff.timeIntervalSince1970 * 1_000))
        return try await inTransaction { db in
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

    /// Reads the change feed after `sequence`, in one read transaction. Synchronous: a local
    /// read, which a server may make while it opens, before anything can commit.
    public func changes(after sequence: UInt64, limit: Int) throws -> [StoredChange] {
        try writer.read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT seq, commit_seq, committed_at, resource, id, epoch, counter, json, scope, mutation
                    FROM stateloop_changes WHERE seq > ? AND row_fields IS NULL ORDER BY seq LIMIT ?
                    """,
                arguments: [Int64(clamping: sequence), max(0, limit)]
            )
            return rows.map { row in
                let scope: String? = row["scope"]
                let mutation: String? = row["mutation"]
                return StoredChange(
                    sequence: UInt64(row["seq"] as Int64),
                    commit: UInt64(row["commit_seq"] as Int64),
                    time: StoreClock.date(microseconds: row["committed_at"]),
                    value: StoredValue(
                        key: ResourceKey(resource: row["resource"], id: row["id"]),
                        version: Version(epoch: UInt64(row["epoch"] as Int64), counter: UInt64(row["counter"] as Int64)), json: row["json"]
                    ),
                    cause: scope.flatMap { scope in mutation.map { ChangeCause(scope: scope, mutation: MutationID(rawValue: $0)) } }
                )
            }
        }
    }

    /// Every client's processed mutations, as stored: for an audit from outside the server.
    public func clientProgress() throws -> [ClientProgress] {
        try writer.read { db in
            try Row.fetchAll(db, sql: "SELECT scope, client, last_sequence FROM stateloop_clients").map { row in
                ClientProgress(
                    scope: row["scope"], client: ClientID(rawValue: row["client"]), lastMutationID: UInt64(bitPattern: row["last_sequence"]))
            }
        }
    }

    /// Deletes the feed's entries committed before `cutoff`, except the newest commit's, kept
    /// whole: a reader never sees part of a commit, and the newest entry keeps the next
    /// position above every one handed out.
    ///
    /// The newest position forgotten is kept (`forgotten_through`): a collection's cookie at or
    /// before it cannot be caught up from the feed, and is answered with the whole result.
    public func forgetChanges(committedBefore cutoff: Date) async throws -> Int {
        try await inTransaction { db in
            let condition = """
                committed_at < ? AND commit_seq < (SELECT commit_seq FROM stateloop_changes ORDER BY seq DESC LIMIT 1)
                """
            let arguments: StatementArguments = [StoreClock.microseconds(cutoff)]
            if let through = try Int64.fetchOne(db, sql: "SELECT max(seq) FROM stateloop_changes WHERE \(condition)", arguments: arguments) {
                try db.execute(
                    sql: """
                        INSERT INTO stateloop_meta (key, value) VALUES ('forgotten_through', ?)
                        ON CONFLICT (key) DO UPDATE SET value = max(value, excluded.value)
                        """,
                    arguments: [through]
                )
            }
            try db.execute(sql: "DELETE FROM stateloop_changes WHERE \(condition)", arguments: arguments)
            return db.changesCount
        }
    }

    /// Makes the index that answers a collection's queries on `fields` (their conditions'
    /// fields, then their order's), if it is not there yet.
    public func prepareRows(of collection: String, indexedBy fields: [String]) async throws {
        guard RowSQL.isCollectionName(collection), fields.allSatisfy(RowSQL.isFieldName) else { return }
        try await inTransaction { db in try db.execute(sql: RowSQL.index(collection, fields)) }
    }

    /// Adds an observer of every later commit.
    public func observeCommits(_ observer: @escaping @Sendable (CommittedChanges) -> Void) {
        observers.withLock { $0.append(observer) }
    }

    /// Creates the tables and the epoch if needed; returns the epoch.
    private static func prepare(_ writer: any DatabaseWriter, epoch: UInt64? = nil) throws -> UInt64 {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("stateloop-server-1") { db in
            try db.execute(
                sql: """
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
            try db.execute(
                sql: "INSERT INTO stateloop_meta (key, value) VALUES ('epoch', ?)", arguments: [Int64(epoch ?? StoreClock.millisecondsNow())])
        }
        migrator.registerMigration("stateloop-server-2: change feed") { db in
            // A rowid is one more than the largest in the table, and pruning never deletes the
            // newest entry: a position is never handed out twice, so a reader's stays valid
            // (AUTOINCREMENT would say the same at the price of a second write per entry).
            try db.execute(
                sql: """
                    CREATE TABLE stateloop_changes (
                        seq INTEGER PRIMARY KEY, commit_seq INTEGER NOT NULL, committed_at INTEGER NOT NULL,
                        resource TEXT NOT NULL, id TEXT NOT NULL, epoch INTEGER NOT NULL, counter INTEGER NOT NULL, json BLOB NOT NULL,
                        scope TEXT, mutation TEXT);
                    CREATE INDEX stateloop_changes_by_time ON stateloop_changes (committed_at);
                    """)
        }
        migrator.registerMigration("stateloop-server-3: generation") { db in
            // A new file gets a random generation. A file from before marks gets its epoch, so
            // that a copy of it taken before this migration gets the same one as the file.
            let empty = try Int.fetchOne(db, sql: "SELECT (SELECT count(*) FROM stateloop_values) + (SELECT count(*) FROM stateloop_changes)") == 0
            let epoch = try Int64.fetchOne(db, sql: "SELECT value FROM stateloop_meta WHERE key = 'epoch'") ?? 1
            let generation = empty ? Int64.random(in: 1...Int64.max) : epoch
            try db.execute(sql: "INSERT INTO stateloop_meta (key, value) VALUES ('generation', ?)", arguments: [generation])
        }
        migrator.registerMigration("stateloop-server-4: collections") { db in
            // A deleted row keeps its counter, its JSON NULL. Its changes are entries of the one
            // change feed, so that positions and the high-water mark cover rows and values
            // alike; `row_fields` (the fields before and after) marks them.
            try db.execute(
                sql: """
                    CREATE TABLE stateloop_rows (
                        collection TEXT NOT NULL, id TEXT NOT NULL, counter INTEGER NOT NULL, json BLOB, fields TEXT NOT NULL,
                        PRIMARY KEY (collection, id)) WITHOUT ROWID;
                    ALTER TABLE stateloop_changes ADD COLUMN row_fields TEXT;
                    CREATE INDEX stateloop_changes_of_rows ON stateloop_changes (resource, seq) WHERE row_fields IS NOT NULL;
                    """)
        }
        try migrator.migrate(writer)
        return try writer.read { db in
            try UInt64.fetchOne(db, sql: "SELECT value FROM stateloop_meta WHERE key = 'epoch'") ?? 1
        }
    }
}
