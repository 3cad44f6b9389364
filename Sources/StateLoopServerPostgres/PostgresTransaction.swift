import Foundation
import PostgresNIO
import StateLoopServer
import StateLoopWire

/// One transaction of a ``PostgresStore``, which records what it changed for the change feed.
/// Used only on the store's own threads, inside the transaction (see ``BlockingConnection``).
///
/// A write transaction runs at `READ COMMITTED` and locks every key it touches until it ends,
/// so that several writers at once (on one instance or several) behave as if they ran one after
/// another, as the SQLite store's do: a read-modify-write never loses a concurrent writer's
/// change. The first touch of a key takes the key's advisory lock (a key that does not exist
/// yet has no row to lock), in a statement of its own, so the statements after it read what
/// was committed before it was granted; reads also lock the rows they return (`FOR UPDATE`),
/// which a page of rows, whose keys are not known before, relies on. Two writers that take
/// keys in opposite orders deadlock; PostgreSQL ends one, which the store runs again
/// (``conflicted``).
final class PostgresTransaction: StoreTransaction {
    let epoch: UInt64
    var cause: ChangeCause?
    /// Whether PostgreSQL ended this transaction to break a deadlock or a serialization
    /// conflict: running the body again is safe, whatever error the body turned it into.
    private(set) var conflicted = false
    private let connection: BlockingConnection
    private let now: @Sendable () -> Date
    /// Whether this is a write transaction, which locks what it touches.
    private let locksKeys: Bool
    private var locked: Set<ResourceKey> = []
    /// The rows locked, apart from values: a collection and a resource may share a name.
    private var lockedRows: Set<ResourceKey> = []
    private var changes = TransactionChanges()
    /// Every value and row written, in order, for the change feed (which keeps each write).
    private var written: [FeedEntries.Entry] = []

    /// The payload of the commit's notification to the other instances' listeners (the store's
    /// instance); `nil` for none.
    private let notification: String?

    init(connection: BlockingConnection, epoch: UInt64, now: @escaping @Sendable () -> Date, locksKeys: Bool, notification: String?) {
        self.notification = notification
        self.connection = connection
        self.epoch = epoch
        self.now = now
        self.locksKeys = locksKeys
    }

    /// Runs `query`, noting a deadlock or serialization failure.
    private func run(_ query: PostgresQuery) throws -> [PostgresRow] {
        do {
            return try connection.rows(query)
        } catch let error as PSQLError {
            if let state = error.serverInfo?[.sqlState], state == "40P01" || state == "40001" { conflicted = true }
            throw error
        }
    }

    /// The text of `key`'s advisory lock: the resource's length first, so that no two keys make
    /// the same text.
    private static func lockName(of key: ResourceKey) -> String {
        "\(key.resource.utf8.count):\(key.resource)/\(key.id)"
    }

    /// Reads `key`; in a write transaction, locks it until the commit.
    ///
    /// A key with a row is locked by its row (`FOR UPDATE`, which also reads the newest
    /// committed version after waiting): one round trip, the common case. A key without one
    /// has no row to lock: its advisory lock is taken, then it is read again, in a new
    /// statement, so that a row another writer inserted under that lock meanwhile is seen.
    /// Writers of a key take its advisory lock too (see ``write(_:to:)``), so nothing inserts
    /// the key between the two.
    func value(of key: ResourceKey) throws -> StoredValue? {
        guard locksKeys else { return try select(key, locking: false) }
        if locked.contains(key) { return try select(key, locking: true) }
        if let value = try select(key, locking: true) {
            locked.insert(key)
            return value
        }
        _ = try run("SELECT pg_advisory_xact_lock(hashtextextended(\(Self.lockName(of: key)), 0))")
        locked.insert(key)
        return try select(key, locking: true)
    }

    private func select(_ key: ResourceKey, locking: Bool) throws -> StoredValue? {
        let rows = try run(
            locking
                ? "SELECT counter, json FROM stateloop_values WHERE resource = \(key.resource) AND id = \(key.id) FOR UPDATE"
                : "SELECT counter, json FROM stateloop_values WHERE resource = \(key.resource) AND id = \(key.id)")
        return try rows.first.map { row in
            let (counter, json) = try row.decode((Int64, Data).self)
            return StoredValue(key: key, version: Version(epoch: epoch, counter: UInt64(counter)), json: json)
        }
    }

    func values(of resource: String, prefix: String, after cursor: String?, limit: Int, descending: Bool) throws -> [StoredValue] {
        // The ids from `prefix` up to `prefix` followed by the highest scalar, in byte order
        // (the column's collation is "C"), as the SQLite store reads them.
        let end = prefix + "\u{10FFFF}"
        let limit = max(0, limit)
        // In a write transaction the rows are locked as they are read (`FOR UPDATE`).
        let locking = locksKeys ? " FOR UPDATE" : ""
        let rows: [PostgresRow] =
            switch (cursor, descending) {
            case (nil, false):
                try run(
                    """
                    SELECT id, counter, json FROM stateloop_values WHERE resource = \(resource) AND id >= \(prefix) AND id < \(end)
                    ORDER BY id ASC LIMIT \(limit)\(unescaped: locking)
                    """)
            case (nil, true):
                try run(
                    """
                    SELECT id, counter, json FROM stateloop_values WHERE resource = \(resource) AND id >= \(prefix) AND id < \(end)
                    ORDER BY id DESC LIMIT \(limit)\(unescaped: locking)
                    """)
            case (let cursor?, false):
                try run(
                    """
                    SELECT id, counter, json FROM stateloop_values WHERE resource = \(resource) AND id >= \(prefix) AND id < \(end)
                    AND id > \(cursor) ORDER BY id ASC LIMIT \(limit)\(unescaped: locking)
                    """)
            case (let cursor?, true):
                try run(
                    """
                    SELECT id, counter, json FROM stateloop_values WHERE resource = \(resource) AND id >= \(prefix) AND id < \(end)
                    AND id < \(cursor) ORDER BY id DESC LIMIT \(limit)\(unescaped: locking)
                    """)
            }
        return try rows.map { row in
            let (id, counter, json) = try row.decode((String, Int64, Data).self)
            return StoredValue(key: ResourceKey(resource: resource, id: id), version: Version(epoch: epoch, counter: UInt64(counter)), json: json)
        }
    }

    /// Writes `key`. The upsert takes the key's row lock until the commit: writers of one key,
    /// on any instance, get its counters one after another. On a key this transaction has not
    /// touched yet, the same statement first takes the key's advisory lock, which a reader of
    /// the key while it had no row holds (see ``value(of:)``); the conflict check runs after
    /// the lock and updates the newest row, whatever the statement's snapshot.
    func write(_ json: Data, to key: ResourceKey) throws -> Version {
        // Never nil: an unconditional upsert always writes.
        try upsert(json, to: key, onlyIfChanged: false)!
    }

    /// ``write(_:to:)`` whose update is conditional on the stored bytes differing, in the same
    /// statement: an unchanged key costs no extra round trip, and stays locked until the
    /// commit all the same (PostgreSQL locks a conflicting row even when the update's condition
    /// is false), so what this transaction decided on cannot change under it.
    func writeIfChanged(_ json: Data, to key: ResourceKey) throws -> Version? {
        try upsert(json, to: key, onlyIfChanged: true)
    }

    private func upsert(_ json: Data, to key: ResourceKey, onlyIfChanged: Bool) throws -> Version? {
        let condition = onlyIfChanged ? " WHERE stateloop_values.json IS DISTINCT FROM excluded.json" : ""
        let rows: [PostgresRow]
        if locksKeys && !locked.contains(key) {
            rows = try run(
                """
                INSERT INTO stateloop_values (resource, id, counter, json)
                SELECT \(key.resource), \(key.id), 1, \(json) FROM (SELECT pg_advisory_xact_lock(hashtextextended(\(Self.lockName(of: key)), 0))) AS locked
                ON CONFLICT (resource, id) DO UPDATE SET counter = stateloop_values.counter + 1, json = excluded.json\(unescaped: condition)
                RETURNING counter
                """)
            locked.insert(key)
        } else {
            rows = try run(
                """
                INSERT INTO stateloop_values (resource, id, counter, json) VALUES (\(key.resource), \(key.id), 1, \(json))
                ON CONFLICT (resource, id) DO UPDATE SET counter = stateloop_values.counter + 1, json = excluded.json\(unescaped: condition)
                RETURNING counter
                """)
        }
        guard let counter = try rows.first?.decode(Int64.self) ?? (onlyIfChanged ? nil : 1) else { return nil }
        let value = StoredValue(key: key, version: Version(epoch: epoch, counter: UInt64(counter)), json: json)
        written.append(FeedEntries.Entry(value: value))
        changes.wrote(value)
        return value.version
    }

    // MARK: Rows

    /// The lock of a row's key: a value's with a mark, so the two never share one.
    private static func rowLockName(of key: ResourceKey) -> String {
        "row:" + lockName(of: key)
    }

    func row(of key: ResourceKey) throws -> StoredRow? {
        try lockedRow(key).flatMap { stored in
            stored.json.map { StoredRow(key: key, version: Version(epoch: epoch, counter: stored.counter), json: $0, fields: stored.fields) }
        }
    }

    /// Reads the row `key` as stored (a deleted one too); in a write transaction, locks it
    /// until the commit, as ``value(of:)`` locks a value: by its advisory lock, taken before the
    /// read, so that a row inserted by another writer meanwhile is seen.
    private func lockedRow(_ key: ResourceKey) throws -> (counter: UInt64, json: Data?, fields: [String: FieldValue])? {
        if locksKeys && !lockedRows.contains(key) {
            _ = try run("SELECT pg_advisory_xact_lock(hashtextextended(\(Self.rowLockName(of: key)), 0))")
            lockedRows.insert(key)
        }
        let locking = locksKeys ? " FOR UPDATE" : ""
        let rows = try run(
            "SELECT counter, json, fields::text FROM stateloop_rows WHERE collection = \(key.resource) AND id = \(key.id)\(unescaped: locking)")
        return try rows.first.map { row in
            let (counter, json, fields) = try row.decode((Int64, Data?, String).self)
            return (UInt64(counter), json, try RowSQL.decode(fields))
        }
    }

    func writeRow(_ json: Data?, fields: [String: FieldValue], to key: ResourceKey) throws -> Version? {
        let stored = try lockedRow(key)
        let before = stored?.json == nil ? nil : stored?.fields
        let after = json == nil ? nil : fields
        // Unchanged only if its fields are too: a field declared since is filled in by a write.
        guard stored?.json != json || before != after else { return nil }
        let counter = (stored?.counter ?? 0) + 1
        _ = try run(
            """
            INSERT INTO stateloop_rows (collection, id, counter, json, fields)
            VALUES (\(key.resource), \(key.id), \(Int64(counter)), \(json), \(try RowSQL.encode(after ?? [:]))::jsonb)
            ON CONFLICT (collection, id) DO UPDATE SET counter = excluded.counter, json = excluded.json, fields = excluded.fields
            """)
        let version = Version(epoch: epoch, counter: counter)
        // A deletion's entry has empty bytes: no reader of values sees row entries.
        written.append(
            FeedEntries.Entry(
                value: StoredValue(key: key, version: version, json: json ?? Data()),
                rowFields: try RowSQL.FeedFields(before: before, after: after).text))
        // Its position is the feed's, given at the commit.
        changes.wroteRow(RowChange(position: 0, key: key, version: version, json: json, before: before, after: after))
        return version
    }

    func rows(of collection: String, matching query: RowQuery) throws -> [StoredRow] {
        try RowSQL.check(collection, query)
        return try run(try PostgresRowSQL.select(collection, query)).map { row in
            let (id, counter, json, fields) = try row.decode((String, Int64, Data, String).self)
            return StoredRow(
                key: ResourceKey(resource: collection, id: id), version: Version(epoch: epoch, counter: UInt64(counter)), json: json,
                fields: try RowSQL.decode(fields))
        }
    }

    func rows(of collection: String, matching query: RowQuery, after id: String?, limit: Int) throws -> [StoredRow] {
        try RowSQL.check(collection, query)
        return try run(try PostgresRowSQL.page(collection, query, after: id, limit: limit)).map { row in
            let (id, counter, json, fields) = try row.decode((String, Int64, Data, String).self)
            return StoredRow(
                key: ResourceKey(resource: collection, id: id), version: Version(epoch: epoch, counter: UInt64(counter)), json: json,
                fields: try RowSQL.decode(fields))
        }
    }

    func rowChanges(of collection: String, after position: UInt64, limit: Int) throws -> [RowChange] {
        let rows = try run(
            """
            SELECT seq, id, epoch, counter, json, row_fields FROM stateloop_changes
            WHERE resource = \(collection) AND row_fields IS NOT NULL AND seq > \(Int64(clamping: position)) ORDER BY seq LIMIT \(max(0, limit))
            """)
        return try rows.map { row in
            let (seq, id, epoch, counter, json, text) = try row.decode((Int64, String, Int64, Int64, Data, String).self)
            let fields = try RowSQL.FeedFields(text: text)
            return RowChange(
                position: UInt64(seq), key: ResourceKey(resource: collection, id: id),
                version: Version(epoch: UInt64(epoch), counter: UInt64(counter)), json: fields.after == nil ? nil : json,
                before: fields.before, after: fields.after)
        }
    }

    /// Takes the feed's lock, which every committing transaction takes last and holds to its
    /// commit: those committing now are done, and no other commits until this one ends.
    func holdCommits() throws {
        _ = try run("SELECT pg_advisory_xact_lock(\(PostgresSchema.feedLock))")
    }

    func rowFeedBounds() throws -> RowFeedBounds {
        let rows = try run(
            """
            SELECT greatest((SELECT max(seq) FROM stateloop_changes), (SELECT max(commit_seq) FROM stateloop_progress), 0),
                   coalesce((SELECT value FROM stateloop_meta WHERE key = 'forgotten_through'), 0)
            """)
        guard let row = rows.first else { return RowFeedBounds(newest: 0, forgottenThrough: 0) }
        let (newest, forgotten) = try row.decode((Int64, Int64).self)
        return RowFeedBounds(newest: UInt64(max(0, newest)), forgottenThrough: UInt64(max(0, forgotten)))
    }

    /// Writes the transaction's entries in the change feed, just before its commit, and returns
    /// what the commit changed (`nil` if nothing a push would carry).
    ///
    /// The feed's positions are taken under one lock that every store's transactions take last
    /// and hold until they commit: positions then rise in commit order across all instances,
    /// so a reader of the feed that has seen position `n` has seen every commit before it, and
    /// catching up is reading after its last position. The lock is held for two statements
    /// and the commit; PostgreSQL takes a lock of its own as a transaction that notifies
    /// commits, so the order costs little more than the notification does.
    func seal() throws -> FeedFollower.OwnCommit? {
        let progress = changes.committed(cause: cause, now: now).progress
        guard !written.isEmpty || !progress.isEmpty else { return nil }
        let first =
            try run(
                "SELECT nextval(pg_get_serial_sequence('stateloop_changes', 'seq')) FROM (SELECT pg_advisory_xact_lock(\(PostgresSchema.feedLock))) AS locked"
            ).first?.decode(Int64.self) ?? 0
        let time = now()
        var last = first
        for statement in try FeedEntries(
            commit: first, time: StoreClock.microseconds(time), epoch: Int64(epoch), cause: cause, values: written, progress: progress,
            notification: notification
        ).inserts() {
            last = try run(statement).first?.decode(Int64?.self) ?? last
        }
        if !written.isEmpty {
            // A commit that wrote no value has no entries in the feed (`feed` stays `nil`).
            _ = changes.fed(at: first, time: time)
            _ = changes.fed(at: last, time: time)
        }
        return FeedFollower.OwnCommit(changes: changes.committed(cause: cause, now: now), first: UInt64(first), last: UInt64(last))
    }

    func answer(to mutation: String, scope: String) throws -> RememberedAnswer? {
        // Two instances may get the same mutation at once (a client's retry): the second waits
        // here for the first's commit, then reads its answer (read committed reads what was
        // committed before each statement), so the mutation is applied once.
        _ = try run("SELECT pg_advisory_xact_lock(hashtext(\(scope)), hashtext(\(mutation)))")
        let rows = try run("SELECT fingerprint, status, body FROM stateloop_answers WHERE scope = \(scope) AND mutation = \(mutation)")
        return try rows.first.map { row in
            let (fingerprint, status, body) = try row.decode((Int64, Int32, Data).self)
            return RememberedAnswer(fingerprint: UInt64(bitPattern: fingerprint), status: Int(status), body: body)
        }
    }

    func remember(_ answer: RememberedAnswer, to mutation: String, scope: String, client: ClientID?, sequence: UInt64?) throws {
        let (fingerprint, status) = (Int64(bitPattern: answer.fingerprint), Int32(answer.status))
        let (clientID, number) = (client?.rawValue, sequence.map { Int64(bitPattern: $0) })
        _ = try run(
            """
            INSERT INTO stateloop_answers (scope, mutation, client, sequence, fingerprint, status, body)
            VALUES (\(scope), \(mutation), \(clientID), \(number), \(fingerprint), \(status), \(answer.body))
            ON CONFLICT (scope, mutation) DO UPDATE SET client = excluded.client, sequence = excluded.sequence,
                fingerprint = excluded.fingerprint, status = excluded.status, body = excluded.body
            """)
    }

    func lastMutationID(of client: ClientID, scope: String) throws -> UInt64? {
        let rows = try run("SELECT last_sequence FROM stateloop_clients WHERE scope = \(scope) AND client = \(client.rawValue)")
        return try rows.first.map { UInt64(bitPattern: try $0.decode(Int64.self)) }
    }

    func setLastMutationID(_ sequence: UInt64, of client: ClientID, scope: String) throws {
        let (number, seen) = (Int64(bitPattern: sequence), Int64(StoreClock.millisecondsNow()))
        let rows = try run(
            """
            INSERT INTO stateloop_clients (scope, client, last_sequence, last_seen) VALUES (\(scope), \(client.rawValue), \(number), \(seen))
            ON CONFLICT (scope, client) DO UPDATE
            SET last_sequence = greatest(stateloop_clients.last_sequence, excluded.last_sequence), last_seen = excluded.last_seen
            RETURNING last_sequence
            """)
        _ = try run(
            """
            DELETE FROM stateloop_answers WHERE scope = \(scope) AND client = \(client.rawValue) AND sequence < \(number)
            """)
        let newest = try rows.first.map { UInt64(bitPattern: try $0.decode(Int64.self)) } ?? sequence
        changes.progressed(ClientProgress(scope: scope, client: client, lastMutationID: newest))
    }
}
