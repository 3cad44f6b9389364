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
    ]

    /// The advisory lock every transaction that commits changes takes last, to give its feed
    /// entries their positions (any fixed number: the lock's name).
    static let feedLock: Int64 = 7461736303

    /// A database written by a newer version of the kit.
    struct TooNew: Error, CustomStringConvertible {
        let found: Int
        let known: Int

        var description: String {
            "the database's StateLoop schema is version \(found), newer than this server knows (\(known)): run a newer server"
        }
    }

    /// Creates or migrates the tables and, on first use, the epoch; returns the epoch and the
    /// change feed's last position, from which a new store's observers hear of commits.
    static func prepare(_ client: PostgresClient, logger: Logger) async throws -> (epoch: UInt64, feed: UInt64) {
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
            for try await stored in try await connection.query("SELECT value FROM stateloop_meta WHERE key = 'epoch'", logger: logger).decode(Int64.self) {
                epoch = stored
            }
            var feed: Int64 = 0
            let last = try await connection.query("""
                SELECT greatest((SELECT max(seq) FROM stateloop_changes), (SELECT max(commit_seq) FROM stateloop_progress), 0)
                """, logger: logger)
            for try await position in last.decode(Int64.self) { feed = position }
            return (UInt64(epoch), UInt64(feed))
        }
    }
}
