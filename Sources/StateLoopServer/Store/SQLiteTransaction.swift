import Foundation
import GRDB
import StateLoopWire

/// One SQLite transaction of a ``SQLiteStore``, which records what it changed for the change
/// feed. Used only on GRDB's queue, inside the transaction.
final class SQLiteTransaction: StoreTransaction {
    let db: Database
    let epoch: UInt64
    var cause: ChangeCause?
    private let now: @Sendable () -> Date
    private var changes = TransactionChanges()

    init(db: Database, epoch: UInt64, now: @escaping @Sendable () -> Date = { Date() }) {
        self.db = db
        self.epoch = epoch
        self.now = now
    }

    var committedChanges: CommittedChanges {
        changes.committed(cause: cause, now: now)
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
        // Never nil: an unconditional upsert always writes.
        try upsert(json, to: key, onlyIfChanged: false)!
    }

    func writeIfChanged(_ json: Data, to key: ResourceKey) throws -> Version? {
        try upsert(json, to: key, onlyIfChanged: true)
    }

    /// One upsert that returns the new counter (RETURNING: SQLite 3.35, 2021; Debian 12 has
    /// 3.40, Apple's platforms of the package more), or no row when `onlyIfChanged` and the key
    /// holds these bytes already: the update's condition compares in the same statement, so an
    /// unchanged write costs no read. Statements are prepared once per connection: a
    /// server-side change can write thousands.
    private func upsert(_ json: Data, to key: ResourceKey, onlyIfChanged: Bool) throws -> Version? {
        let condition = onlyIfChanged ? " WHERE stateloop_values.json IS NOT excluded.json" : ""
        let returned = try Int64.fetchOne(
            db.cachedStatement(
                sql: """
                    INSERT INTO stateloop_values (resource, id, counter, json) VALUES (?, ?, 1, ?)
                    ON CONFLICT (resource, id) DO UPDATE SET counter = counter + 1, json = excluded.json\(condition)
                    RETURNING counter
                    """
            ),
            arguments: [key.resource, key.id, json]
        )
        guard let counter = returned ?? (onlyIfChanged ? nil : 1) else { return nil }
        let version = Version(epoch: epoch, counter: UInt64(counter))
        try appendToFeed(json, key: key, counter: counter)
        changes.wrote(StoredValue(key: key, version: version, json: json))
        return version
    }

    /// Keeps the write in the change feed; the commit's entries share the position of its first.
    private func appendToFeed(_ json: Data, key: ResourceKey, counter: Int64) throws {
        let time = changes.feed?.time ?? now()
        try db.cachedStatement(
            sql: """
                INSERT INTO stateloop_changes (commit_seq, committed_at, resource, id, epoch, counter, json, scope, mutation)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            changes.feed?.commit ?? 0, StoreClock.microseconds(time), key.resource, key.id, Int64(epoch), counter, json,
            cause?.scope, cause?.mutation.rawValue,
        ])
        let sequence = db.lastInsertedRowID
        if changes.fed(at: sequence, time: time) {
            try db.cachedStatement(sql: "UPDATE stateloop_changes SET commit_seq = seq WHERE seq = ?").execute(arguments: [sequence])
        }
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
            arguments: [
                scope, mutation, client?.rawValue, sequence.map { Int64(bitPattern: $0) },
                Int64(bitPattern: answer.fingerprint), answer.status, answer.body,
            ]
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
        ).execute(arguments: [scope, client.rawValue, Int64(bitPattern: sequence), Int64(StoreClock.millisecondsNow())])
        try db.cachedStatement(
            sql: "DELETE FROM stateloop_answers WHERE scope = ? AND client = ? AND sequence < ?"
        ).execute(arguments: [scope, client.rawValue, Int64(bitPattern: sequence)])
        let newest = try lastMutationID(of: client, scope: scope) ?? sequence
        changes.progressed(ClientProgress(scope: scope, client: client, lastMutationID: newest))
    }
}
