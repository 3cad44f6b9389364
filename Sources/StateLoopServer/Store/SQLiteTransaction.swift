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
        _ = try appendToFeed(json, key: key, counter: counter, rowFields: nil)
        changes.wrote(StoredValue(key: key, version: version, json: json))
        return version
    }

    /// Keeps the write in the change feed; the commit's entries share the position of its first.
    /// A row's entry carries its fields before and after (`rowFields`); a value's has none.
    /// Returns the entry's position.
    private func appendToFeed(_ json: Data, key: ResourceKey, counter: Int64, rowFields: String?) throws -> Int64 {
        let time = changes.feed?.time ?? now()
        try db.cachedStatement(
            sql: """
                INSERT INTO stateloop_changes (commit_seq, committed_at, resource, id, epoch, counter, json, scope, mutation, row_fields)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            changes.feed?.commit ?? 0, StoreClock.microseconds(time), key.resource, key.id, Int64(epoch), counter, json,
            cause?.scope, cause?.mutation.rawValue, rowFields,
        ])
        let sequence = db.lastInsertedRowID
        if changes.fed(at: sequence, time: time) {
            try db.cachedStatement(sql: "UPDATE stateloop_changes SET commit_seq = seq WHERE seq = ?").execute(arguments: [sequence])
        }
        return sequence
    }

    // MARK: Rows

    func row(of key: ResourceKey) throws -> StoredRow? {
        let row = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT id, counter, json, fields FROM stateloop_rows WHERE collection = ? AND id = ? AND json IS NOT NULL"),
            arguments: [key.resource, key.id]
        )
        return try row.map { try storedRow(key.resource, $0) }
    }

    /// Reads the row as it is, then writes it with its counter raised: a deleted row keeps its
    /// counter (its JSON `NULL`), so that a row made again goes on from it and a client never
    /// sees a version it saw before for other contents.
    func writeRow(_ json: Data?, fields: [String: FieldValue], to key: ResourceKey) throws -> Version? {
        let stored = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT counter, json, fields FROM stateloop_rows WHERE collection = ? AND id = ?"),
            arguments: [key.resource, key.id]
        )
        let storedJSON: Data? = stored?["json"]
        let before = try storedJSON == nil ? nil : RowSQL.decode(stored!["fields"])
        let after = json == nil ? nil : fields
        // Unchanged only if its fields are too: a field declared since is filled in by a write.
        guard storedJSON != json || before != after else { return nil }
        let counter = (stored.map { $0["counter"] as Int64 } ?? 0) + 1
        try db.cachedStatement(
            sql: """
                INSERT INTO stateloop_rows (collection, id, counter, json, fields) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (collection, id) DO UPDATE SET counter = excluded.counter, json = excluded.json, fields = excluded.fields
                """
        ).execute(arguments: [key.resource, key.id, counter, json, try RowSQL.encode(after ?? [:])])
        let feedFields = try RowSQL.FeedFields(before: before, after: after).text
        // A deletion's entry has empty bytes: a value's feed never holds one, and no reader of
        // values sees row entries (``SQLiteStore/changes(after:limit:)`` leaves them out).
        let position = try appendToFeed(json ?? Data(), key: key, counter: counter, rowFields: feedFields)
        let version = Version(epoch: epoch, counter: UInt64(counter))
        changes.wroteRow(RowChange(position: UInt64(position), key: key, version: version, json: json, before: before, after: after))
        return version
    }

    func rows(of collection: String, matching query: RowQuery) throws -> [StoredRow] {
        let (sql, arguments) = try RowSQL.select(collection, query)
        return try storedRows(collection, sql, arguments)
    }

    func rows(of collection: String, matching query: RowQuery, after id: String?, limit: Int) throws -> [StoredRow] {
        let (sql, arguments) = try RowSQL.page(collection, query, after: id, limit: limit)
        return try storedRows(collection, sql, arguments)
    }

    /// The rows `sql` selects (`id, counter, json, fields`), read by position from a cursor: a
    /// row copied and its columns looked up by name cost a page of 5,000 rows a third of its
    /// read.
    private func storedRows(_ collection: String, _ sql: String, _ arguments: StatementArguments) throws -> [StoredRow] {
        var stored: [StoredRow] = []
        let cursor = try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: arguments)
        while let row = try cursor.next() {
            stored.append(try storedRow(collection, row))
        }
        return stored
    }

    /// A row of `collection` read as `id, counter, json, fields`, by position.
    private func storedRow(_ collection: String, _ row: Row) throws -> StoredRow {
        StoredRow(
            key: ResourceKey(resource: collection, id: row[0]), version: Version(epoch: epoch, counter: UInt64(row[1] as Int64)), json: row[2],
            fields: try RowSQL.decode(row[3]))
    }

    func rowChanges(of collection: String, after position: UInt64, limit: Int) throws -> [RowChange] {
        let rows = try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT seq, id, epoch, counter, json, row_fields FROM stateloop_changes
                    WHERE resource = ? AND row_fields IS NOT NULL AND seq > ? ORDER BY seq LIMIT ?
                    """
            ),
            arguments: [collection, Int64(clamping: position), max(0, limit)]
        )
        return try rows.map { row in
            let fields = try RowSQL.FeedFields(text: row["row_fields"])
            let json: Data = row["json"]
            return RowChange(
                position: UInt64(row["seq"] as Int64), key: ResourceKey(resource: collection, id: row["id"]),
                version: Version(epoch: UInt64(row["epoch"] as Int64), counter: UInt64(row["counter"] as Int64)),
                json: fields.after == nil ? nil : json, before: fields.before, after: fields.after
            )
        }
    }

    func rowFeedBounds() throws -> RowFeedBounds {
        let newest = try Int64.fetchOne(db.cachedStatement(sql: "SELECT max(seq) FROM stateloop_changes")) ?? 0
        let forgotten = try Int64.fetchOne(db.cachedStatement(sql: "SELECT value FROM stateloop_meta WHERE key = 'forgotten_through'")) ?? 0
        return RowFeedBounds(newest: UInt64(max(0, newest)), forgottenThrough: UInt64(max(0, forgotten)))
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
