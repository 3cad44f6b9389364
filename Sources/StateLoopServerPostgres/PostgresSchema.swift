import Foundation
import Logging
import PostgresNIO
import StateLoopServer

/// The PostgreSQL store's tables, created and migrated as a store opens.
///
/// Each migration runs once, in order, in one transaction with the version it brings, under a
/// transaction-level advisory lock: instances that open the same database together take turns,
/// and the later ones find the work done. A database whose version is newer than this code
/// knows is refused rather than misread.
enum PostgresSchema {
    /// The migrations, in order: the version after step `n` is `n + 1`.
    static let migrations: [String] = [
        """
        CREATE TABLE stateloop_meta (key TEXT PRIMARY KEY, value BIGINT NOT NULL);
        CREATE TABLE stateloop_values (
            resource TEXT NOT NULL, id TEXT COLLATE "C" NOT NULL, counter BIGINT NOT NULL, json BYTEA NOT NULL,
            PRIMARY KEY (resource, id));
        CREATE TABLE stateloop_answers (
            scope TEXT NOT NULL, mutation TEXT NOT NULL, client TEXT, sequence BIGINT,
            fingerprint BIGINT NOT NULL, status INTEGER NOT NULL, body BYTEA NOT NULL,
            PRIMARY KEY (scope, mutation));
        CREATE INDEX stateloop_answers_by_client ON stateloop_answers (scope, client, sequence);
        CREATE TABLE stateloop_clients (
            scope TEXT NOT NULL, client TEXT NOT NULL, last_sequence BIGINT NOT NULL, last_seen BIGINT NOT NULL,
            PRIMARY KEY (scope, client));
        CREATE TABLE stateloop_changes (
            seq BIGSERIAL PRIMARY KEY, commit_seq BIGINT NOT NULL, committed_at BIGINT NOT NULL,
            resource TEXT NOT NULL, id TEXT NOT NULL, epoch BIGINT NOT NULL, counter BIGINT NOT NULL, json BYTEA NOT NULL,
            scope TEXT, mutation TEXT);
        CREATE INDEX stateloop_changes_by_time ON stateloop_changes (committed_at);
        CREATE TABLE stateloop_progress (
            commit_seq BIGINT NOT NULL, committed_at BIGINT NOT NULL, scope TEXT NOT NULL, client TEXT NOT NULL,
            last_sequence BIGINT NOT NULL, cause_scope TEXT, cause_mutation TEXT);
        CREATE INDEX stateloop_progress_by_commit ON stateloop_progress (commit_seq);
        CREATE INDEX stateloop_progress_by_time ON stateloop_progress (committed_at);
        """,
        // Collections: a deleted row keeps its counter, its JSON NULL; a row's write is an entry
        // of the one feed, marked by its fields before and after.
        """
        CREATE TABLE stateloop_rows (
            collection TEXT NOT NULL, id TEXT COLLATE "C" NOT NULL, counter BIGINT NOT NULL, json BYTEA, fields JSONB NOT NULL,
            PRIMARY KEY (collection, id));
        ALTER TABLE stateloop_changes ADD COLUMN row_fields TEXT;
        CREATE INDEX stateloop_changes_of_rows ON stateloop_changes (resource, seq) WHERE row_fields IS NOT NULL;
        """,
    ]

    /// The advisory lock every transaction that commits changes takes last, to give its feed
    /// entries their positions (any fixed number: the lock's name).
    static let feedLock: Int64 = 7_461_736_303

    /// A database written by a newer version of the kit.
    struct TooNew: Error, CustomStringConvertible {
        let found: Int
        let known: Int

        var description: String {
            "the database's StateLoop schema is version \(found), newer than this server knows (\(known)): run a newer server"
        }
    }

    /// What a store finds as it opens the database.
    struct Prepared {
        /// The epoch, new if the database's history went back.
        let epoch: UInt64
        /// The change feed's last position, from which a new store's observers hear of commits.
        let feed: UInt64
        /// The new epoch begun because the database was replaced, and why.
        let restart: EpochRestart?
    }

    /// Creates or migrates the tables and, on first use, the epoch; compares the database's
    /// identity with the one stored when the epoch began and starts a new epoch when it
    /// changed (``checkIdentity(_:epoch:now:logger:)``). All under one advisory lock, so
    /// instances opening the database together start one new epoch at most: the later ones
    /// find the identity stored.
    static func prepare(_ client: PostgresClient, now: Date, logger: Logger) async throws -> Prepared {
        try await client.withTransaction(logger: logger) { connection in
            // Any fixed number: the lock's name.
            try await connection.query("SELECT pg_advisory_xact_lock(7461736302)", logger: logger)
            try await connection.query("CREATE TABLE IF NOT EXISTS stateloop_schema (version INTEGER NOT NULL)", logger: logger)
            var version = 0
            for try await found in try await connection.query("SELECT version FROM stateloop_schema", logger: logger).decode(Int32.self) {
                version = Int(found)
            }
            guard version <= migrations.count else { throw TooNew(found: version, known: migrations.count) }
            for step in migrations.dropFirst(version) {
                for statement in step.split(separator: ";").map({ $0.trimmingCharacters(in: .whitespacesAndNewlines) }) where !statement.isEmpty {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
            }
            if version == 0 {
                let epoch = Int64(StoreClock.millisecondsNow())
                try await connection.query("INSERT INTO stateloop_meta (key, value) VALUES ('epoch', \(epoch))", logger: logger)
                try await connection.query("INSERT INTO stateloop_schema (version) VALUES (\(Int32(migrations.count)))", logger: logger)
            } else if version < migrations.count {
                try await connection.query("UPDATE stateloop_schema SET version = \(Int32(migrations.count))", logger: logger)
            }
            var epoch: Int64 = 1
            for try await stored in try await connection.query("SELECT value FROM stateloop_meta WHERE key = 'epoch'", logger: logger).decode(
                Int64.self)
            {
                epoch = stored
            }
            let restart = try await checkIdentity(connection, epoch: UInt64(epoch), now: now, logger: logger)
            var feed: Int64 = 0
            let last = try await connection.query(
                """
                SELECT greatest((SELECT max(seq) FROM stateloop_changes), (SELECT max(commit_seq) FROM stateloop_progress), 0)
                """, logger: logger)
            for try await position in last.decode(Int64.self) { feed = position }
            return Prepared(epoch: restart?.epoch ?? UInt64(epoch), feed: UInt64(feed), restart: restart)
        }
    }

    /// What identifies the database whose history the epoch follows, each part kept in
    /// `stateloop_meta` under its key, with the query that reads it now. Each part changes
    /// when the data's history may have gone back, and stays through restarts, crash
    /// recovery, `VACUUM FULL` and renames:
    /// - the cluster's system identifier: another cluster (a dump restored elsewhere, a
    ///   logical replica taking over; also `pg_upgrade`'s new cluster, a needless new epoch);
    /// - the timeline of the WAL being written: a point-in-time recovery or a promoted
    ///   replica (which may lack the old primary's last commits) starts a new one;
    /// - the database's OID: a dump restored into a database created again;
    /// - the values table's OID: a dump restored over dropped tables (`pg_restore --clean`).
    static let identity: [(key: String, query: String)] = [
        ("system_identifier", "SELECT system_identifier FROM pg_control_system()"),
        ("timeline", "SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int::bigint"),
        ("database_oid", "SELECT oid::bigint FROM pg_database WHERE datname = current_database()"),
        ("values_table_oid", "SELECT 'stateloop_values'::regclass::oid::bigint"),
    ]

    /// Compares the database's identity (``identity``) with the one stored in
    /// `stateloop_meta`; if any part differs, begins a new epoch (``beginEpoch(after:now:on:logger:)``).
    /// Then stores the identity as it is now. A part not stored yet (a database from before
    /// these checks) or not readable (a role without the right to call it) is not compared.
    /// Returns the restart, if any. In the caller's transaction.
    private static func checkIdentity(_ connection: PostgresConnection, epoch: UInt64, now: Date, logger: Logger) async throws -> EpochRestart? {
        var stored: [String: Int64] = [:]
        for try await (key, value) in try await connection.query(
            "SELECT key, value FROM stateloop_meta WHERE key <> 'epoch'", logger: logger
        ).decode((String, Int64).self) {
            stored[key] = value
        }
        let current = try await currentIdentity(on: connection, logger: logger)
        let changed = current.filter { part in stored[part.key].map { $0 != part.value } ?? false }.map(\.key)
        var restart: EpochRestart?
        if !changed.isEmpty {
            let begun = try await beginEpoch(after: epoch, now: now, on: connection, logger: logger)
            restart = EpochRestart(previousEpoch: epoch, epoch: begun, reason: .databaseReplaced(changed: changed))
        }
        try await store(current, on: connection, logger: logger)
        return restart
    }

    /// Begins a new epoch in the database at `client`'s, whatever its identity says: for a
    /// restore the identity cannot reveal. Under the schema's lock, like an open. Returns the
    /// epoch.
    static func startNewEpoch(_ client: PostgresClient, now: Date, logger: Logger) async throws -> UInt64 {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(7461736302)", logger: logger)
            var epoch: Int64 = 1
            for try await stored in try await connection.query("SELECT value FROM stateloop_meta WHERE key = 'epoch'", logger: logger).decode(
                Int64.self)
            {
                epoch = stored
            }
            let begun = try await beginEpoch(after: UInt64(epoch), now: now, on: connection, logger: logger)
            try await store(try await currentIdentity(on: connection, logger: logger), on: connection, logger: logger)
            return begun
        }
    }

    /// The parts of ``identity`` that can be read.
    private static func currentIdentity(on connection: PostgresConnection, logger: Logger) async throws -> [(key: String, value: Int64)] {
        var current: [(key: String, value: Int64)] = []
        for (key, query) in identity {
            if let value = try await optionalValue(query, on: connection, logger: logger) { current.append((key, value)) }
        }
        return current
    }

    /// Keeps `identity` in `stateloop_meta`.
    private static func store(_ identity: [(key: String, value: Int64)], on connection: PostgresConnection, logger: Logger) async throws {
        for (key, value) in identity {
            try await connection.query(
                """
                INSERT INTO stateloop_meta (key, value) VALUES (\(key), \(value)) ON CONFLICT (key) DO UPDATE SET value = excluded.value
                """, logger: logger)
        }
    }

    /// Stores a new epoch, later than `epoch` and than any epoch begun before this
    /// millisecond, and adds every value to the change feed at its new version, as one commit
    /// under the feed's lock: the feed's history names the versions clients will see. In the
    /// caller's transaction; returns the epoch.
    private static func beginEpoch(after epoch: UInt64, now: Date, on connection: PostgresConnection, logger: Logger) async throws -> UInt64 {
        let begun = max(epoch + 1, StoreClock.millisecondsNow())
        let (newEpoch, time) = (Int64(begun), StoreClock.microseconds(now))
        try await connection.query("UPDATE stateloop_meta SET value = \(newEpoch) WHERE key = 'epoch'", logger: logger)
        // Under the feed's lock, like every commit's entries: a writer of an instance still
        // running (there should be none after a restore) gives its entries later positions.
        try await connection.query("SELECT pg_advisory_xact_lock(\(feedLock))", logger: logger)
        try await connection.query(
            """
            INSERT INTO stateloop_changes (commit_seq, committed_at, resource, id, epoch, counter, json)
            SELECT 0, \(time), resource, id, \(newEpoch), counter, json FROM stateloop_values ORDER BY resource, id
            """, logger: logger)
        try await connection.query(
            """
            UPDATE stateloop_changes SET commit_seq = (SELECT min(seq) FROM stateloop_changes WHERE commit_seq = 0) WHERE commit_seq = 0
            """, logger: logger)
        return begun
    }

    /// The one value `sql` reads, or `nil` when it reads none or fails (a function this role
    /// may not call, or one a managed service leaves out): inside a savepoint, so that the
    /// failure does not end the transaction.
    private static func optionalValue(_ sql: String, on connection: PostgresConnection, logger: Logger) async throws -> Int64? {
        try await connection.query("SAVEPOINT stateloop_identity", logger: logger)
        do {
            var value: Int64?
            for try await found in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger).decode(Int64?.self) { value = found }
            try await connection.query("RELEASE SAVEPOINT stateloop_identity", logger: logger)
            return value
        } catch {
            try await connection.query("ROLLBACK TO SAVEPOINT stateloop_identity", logger: logger)
            return nil
        }
    }
}
