import Foundation
import GRDB

/// The SQLite file behind a journal: its schema, its reads and writes, and the translation of
/// SQLite's errors into ``JournalError``. Knows nothing of `State` and `Event`: it stores
/// encoded rows.
///
/// Threading: `DatabaseQueue` serializes every access on its own queue, so the journal's writes
/// and its mutation stores' reads and writes may come from any thread.
final class JournalDatabase: Sendable {
    /// The on-disk layout this code writes, in SQLite's `user_version`. 1 kept one row per
    /// event; 2 keeps the events of a commit in rows of up to ``rowCapacity``, each a JSON array
    /// (see ``upgradeFormat(in:)``).
    static let format = 2

    /// The most events a row holds: a commit of more is cut into rows of this size, which are
    /// encoded in parallel.
    static let rowCapacity = 512

    let path: String
    private let queue: DatabaseQueue

    /// Opens or creates the file. In exclusive locking mode: a journal has one writer, the lock
    /// tells a second opener at once, and WAL then needs no shared-memory file.
    ///
    /// `readOnly` opens an existing file without the right to change it, WAL included: such a
    /// connection never checkpoints, so whatever it finds, the files stay byte for byte as they
    /// were (see `Journal.readContents`).
    init(path: String, durability: JournalDurability, readOnly: Bool = false) throws(JournalError) {
        self.path = path
        var configuration = Configuration()
        // WAL is set here rather than with GRDB's `journalMode`, which writes to the file on
        // every open: a file found unreadable must be set aside exactly as it was.
        configuration.busyMode = .immediateError
        configuration.label = "StateLoopJournal"
        configuration.readonly = readOnly
        configuration.prepareDatabase { db in
            guard !readOnly else { return }
            try db.execute(sql: "PRAGMA locking_mode = EXCLUSIVE")
            _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            switch durability {
            case .processCrash: try db.execute(sql: "PRAGMA synchronous = NORMAL")
            case .powerLoss: try db.execute(sql: "PRAGMA synchronous = FULL")
            }
        }
        do {
            queue = try DatabaseQueue(path: path, configuration: configuration)
        } catch {
            throw Self.journalError(error, path: path)
        }
    }

    /// Checks the format of an existing file; returns the format found (0 for a file with no
    /// journal in it yet). Reads only.
    func inspect() throws(JournalError) -> Int {
        try read { db in
            let found = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
            if found > Self.format {
                throw JournalError.writtenByNewerFormat(path: path, found: found, current: Self.format)
            }
            return found
        }
    }

    /// Checks the integrity of every page: it reads the whole file, so only after a session
    /// that did not close cleanly (see ``closedCleanly()``). Reads only.
    func checkPages() throws(JournalError) {
        try checkLength()
        try read { db in
            let check = try String.fetchAll(db, sql: "PRAGMA quick_check")
            if check != ["ok"] {
                throw JournalError.corrupt(path: path, detail: check.prefix(3).joined(separator: "; "))
            }
        }
    }

    /// Checks that the file is as long as its pages: SQLite reads the bytes past the end of a
    /// file cut short as zeros, and its page check looks at the pages' structure, not their
    /// contents, so a file that lost its last bytes would pass it and then fail to decode, as
    /// if the app's types had changed. Only while the WAL beside it is empty (a writer that
    /// just opened makes one), since a WAL may hold pages the main file does not have yet.
    /// Cheap: two pragmas and two file sizes.
    func checkLength() throws(JournalError) {
        func size(of file: String) -> Int? {
            ((try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? NSNumber)?.intValue
        }
        guard (size(of: path + "-wal") ?? 0) == 0, let size = size(of: path) else { return }
        let (pageSize, pageCount) = try read { db in
            (try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0, try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0)
        }
        guard pageSize > 0, size % pageSize != 0 || size < pageSize * pageCount else { return }
        throw JournalError.corrupt(
            path: path,
            detail: "the file was cut short: \(size) bytes, not a whole number of its \(pageSize)-byte pages"
                + (size < pageSize * pageCount ? " (\(pageCount) pages expected)" : "")
                + "; it was damaged after it was written (copied in part, or its disk filled), and no migration can read it"
        )
    }

    /// Whether the last writer closed the file cleanly: set by ``setClosedCleanly(_:)``, cleared
    /// as a writer opens. A file from before the marker counts as not clean.
    func closedCleanly() throws(JournalError) -> Bool {
        try read { db in
            try Int.fetchOne(db, sql: "SELECT value FROM journal_meta WHERE key = 'clean'") == 1
        }
    }

    func setClosedCleanly(_ clean: Bool) throws(JournalError) {
        try write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO journal_meta (key, value) VALUES ('clean', ?)",
                arguments: [clean ? 1 : 0]
            )
        }
    }

    /// Creates the tables of a file that has none yet, and those added since it was created;
    /// writes nothing to a file that has them all.
    func createTablesIfNeeded() throws(JournalError) {
        let found = try read { db in try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0 }
        let hasDropped = try read { db in try db.tableExists("journal_dropped") }
        guard found < Self.format || !hasDropped else { return }
        try write { db in try Self.createTables(in: db) }
    }

    /// Rewrites a format 1 file's events, one row each, as rows of one event in the format 2
    /// table, in a transaction of the caller's (a migration's). Rows are not merged: the file's
    /// next snapshot compacts them.
    static func upgradeFormat(in db: Database) throws {
        guard try db.tableExists("journal_events") else { return }
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS journal_batches (
                    last INTEGER PRIMARY KEY NOT NULL, first INTEGER NOT NULL, payload BLOB NOT NULL);
                INSERT INTO journal_batches (last, first, payload)
                    SELECT sequence, sequence, CAST('[' || CAST(payload AS TEXT) || ']' AS BLOB)
                    FROM journal_events;
                DROP TABLE journal_events;
                """
        )
    }

    /// Creates the tables that are missing, in a transaction of the caller's (a migration's).
    static func createTables(in db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS journal_meta (
                    key TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL);
                CREATE TABLE IF NOT EXISTS journal_batches (
                    last INTEGER PRIMARY KEY NOT NULL, first INTEGER NOT NULL, payload BLOB NOT NULL);
                CREATE TABLE IF NOT EXISTS journal_snapshot (
                    id INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
                    sequence INTEGER NOT NULL, version INTEGER NOT NULL, payload BLOB NOT NULL);
                CREATE TABLE IF NOT EXISTS journal_mutations (
                    store TEXT NOT NULL, position INTEGER NOT NULL, payload BLOB NOT NULL,
                    PRIMARY KEY (store, position));
                CREATE TABLE IF NOT EXISTS journal_confirmed (
                    store TEXT PRIMARY KEY NOT NULL, payload BLOB NOT NULL);
                CREATE TABLE IF NOT EXISTS journal_dropped (
                    store TEXT NOT NULL, id TEXT NOT NULL, reason TEXT NOT NULL,
                    payload BLOB NOT NULL, reported INTEGER NOT NULL DEFAULT 0);
                PRAGMA user_version = \(format);
                """
        )
    }

    // MARK: Meta

    /// The version of each kind of record, as last written (see ``JournalSchema``). A kind the
    /// file has no version for is missing: version 1, or, for the state and the events of a
    /// file written before versions were kept per kind, the app version it kept for both.
    func storedVersions() throws(JournalError) -> [JournalRecordKind: Int] {
        try read { db in
            var versions: [JournalRecordKind: Int] = [:]
            let legacy = try Int.fetchOne(db, sql: "SELECT value FROM journal_meta WHERE key = 'version'")
            if let legacy {
                versions[.state] = legacy
                versions[.events] = legacy
            }
            let rows = try Row.fetchAll(db, sql: "SELECT key, value FROM journal_meta WHERE key LIKE 'schema:%'")
            for row in rows {
                if let kind = JournalRecordKind(metaKey: row[0]) { versions[kind] = row[1] }
            }
            return versions
        }
    }

    /// Records the versions of `kinds`, in the transaction of a migration or on its own.
    static func setVersions(_ versions: [JournalRecordKind: Int], in db: Database) throws {
        for (kind, version) in versions {
            try db.execute(
                sql: "INSERT OR REPLACE INTO journal_meta (key, value) VALUES (?, ?)",
                arguments: [kind.metaKey, version]
            )
        }
        try db.execute(sql: "DELETE FROM journal_meta WHERE key = 'version'")
    }

    func setVersions(_ versions: [JournalRecordKind: Int]) throws(JournalError) {
        try write { db in try Self.setVersions(versions, in: db) }
    }

    /// The kinds of record the file holds at least one of.
    func populatedKinds() throws(JournalError) -> Set<JournalRecordKind> {
        try read { db in
            var kinds: Set<JournalRecordKind> = []
            if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM journal_snapshot)") == true {
                kinds.insert(.state)
            }
            for table in ["journal_batches", "journal_events"] where try db.tableExists(table) {
                if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(table))") == true {
                    kinds.insert(.events)
                }
            }
            for store in try String.fetchAll(db, sql: "SELECT DISTINCT store FROM journal_mutations") {
                kinds.insert(.mutations(store: store))
            }
            for store in try String.fetchAll(db, sql: "SELECT store FROM journal_confirmed") {
                kinds.insert(.confirmedValue(store: store))
            }
            return kinds
        }
    }

    // MARK: Events and snapshot

    struct Snapshot {
        let sequence: Int64
        let version: Int
        let payload: Data
    }

    func snapshot() throws(JournalError) -> Snapshot? {
        try read { db in
            try Row.fetchOne(db, sql: "SELECT sequence, version, payload FROM journal_snapshot").map {
                Snapshot(sequence: $0[0], version: $0[1], payload: $0[2])
            }
        }
    }

    /// Calls `body` with every row of events after `sequence`, in order: the sequence numbers of
    /// its first and last events, and its JSON array.
    func forEachRow(
        after sequence: Int64,
        _ body: (_ first: Int64, _ last: Int64, _ payload: Data) throws(JournalError) -> Void
    ) throws(JournalError) {
        try read { db in
            let rows = try Row.fetchCursor(
                db,
                sql: "SELECT first, last, payload FROM journal_batches WHERE last > ? ORDER BY last",
                arguments: [sequence]
            )
            while let row = try rows.next() {
                try body(row[0], row[1], row[2])
            }
        }
    }

    /// Appends `rows` and, when given, replaces the saved state and drops the rows it covers;
    /// all in one transaction, so a crash keeps either all of it or none.
    func append(_ rows: [EncodedRow], snapshot: Snapshot?) throws(JournalError) {
        try write { db in
            let insert = try db.cachedStatement(
                sql: "INSERT INTO journal_batches (last, first, payload) VALUES (?, ?, ?)"
            )
            for row in rows {
                try insert.execute(arguments: [row.last, row.first, row.payload])
            }
            if let snapshot {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO journal_snapshot (id, sequence, version, payload) VALUES (1, ?, ?, ?)",
                    arguments: [snapshot.sequence, snapshot.version, snapshot.payload]
                )
                // A snapshot is taken at the end of a commit, so no row straddles it.
                try db.execute(
                    sql: "DELETE FROM journal_batches WHERE last <= ?",
                    arguments: [snapshot.sequence]
                )
            }
        }
    }

    // MARK: Mutations

    func mutations(in store: String) throws(JournalError) -> [Data] {
        try read { db in
            try Data.fetchAll(
                db,
                sql: "SELECT payload FROM journal_mutations WHERE store = ? ORDER BY position",
                arguments: [store]
            )
        }
    }

    func replaceMutations(in store: String, with payloads: [Data]) throws(JournalError) {
        try write { db in try Self.replaceMutations(in: store, with: payloads, in: db) }
    }

    private static func replaceMutations(in store: String, with payloads: [Data], in db: Database) throws {
        try db.execute(sql: "DELETE FROM journal_mutations WHERE store = ?", arguments: [store])
        let insert = try db.cachedStatement(
            sql: "INSERT INTO journal_mutations (store, position, payload) VALUES (?, ?, ?)"
        )
        for (position, payload) in payloads.enumerated() {
            try insert.execute(arguments: [store, position, payload])
        }
    }

    /// Keeps a pending mutation that could not be kept in the queue (a migration dropped it, or
    /// it no longer decodes), with the reason, until ``takeDropped(in:)`` reports it.
    static func drop(store: String, id: String, reason: String, payload: Data, in db: Database) throws {
        try db.execute(
            sql: "INSERT INTO journal_dropped (store, id, reason, payload) VALUES (?, ?, ?, ?)",
            arguments: [store, id, reason, payload]
        )
    }

    /// Replaces the queue of `store` with `kept` and keeps `dropped` aside, in one transaction.
    func replaceMutations(
        in store: String, with kept: [Data], dropping dropped: [(id: String, reason: String, payload: Data)]
    ) throws(JournalError) {
        try write { db in
            for entry in dropped {
                try Self.drop(store: store, id: entry.id, reason: entry.reason, payload: entry.payload, in: db)
            }
            try Self.replaceMutations(in: store, with: kept, in: db)
        }
    }

    /// The dropped mutations of `store` not reported yet, oldest first; marked reported (they
    /// stay in the file, for support).
    func takeDropped(in store: String) throws(JournalError) -> [(id: String, reason: String)] {
        try write { db in
            let rows = try Row.fetchAll(
                db, sql: "SELECT id, reason FROM journal_dropped WHERE store = ? AND reported = 0 ORDER BY rowid",
                arguments: [store]
            )
            try db.execute(sql: "UPDATE journal_dropped SET reported = 1 WHERE store = ?", arguments: [store])
            return rows.map { (id: $0[0], reason: $0[1]) }
        }
    }

    func confirmedValue(of store: String) throws(JournalError) -> Data? {
        try read { db in
            try Data.fetchOne(db, sql: "SELECT payload FROM journal_confirmed WHERE store = ?", arguments: [store])
        }
    }

    func setConfirmedValue(_ payload: Data, of store: String) throws(JournalError) {
        try write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO journal_confirmed (store, payload) VALUES (?, ?)",
                arguments: [store, payload]
            )
        }
    }

    // MARK: Limits, for tests

    /// Caps the file at `pages` pages, so that a test can fill the "disk".
    func limitSize(toPages pages: Int) throws(JournalError) {
        try write { db in
            _ = try Int.fetchOne(db, sql: "PRAGMA max_page_count = \(pages)")
        }
    }

    func pageCount() throws(JournalError) -> Int {
        try read { db in try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0 }
    }

    // MARK: Lifetime

    func close() {
        try? queue.close()
    }

    // MARK: Access

    /// One transaction.
    func write<T>(_ body: (Database) throws -> T) throws(JournalError) -> T {
        do {
            return try queue.inDatabase { db in
                var result: T?
                try db.inTransaction {
                    result = try body(db)
                    return .commit
                }
                return result!
            }
        } catch {
            throw Self.journalError(error, path: path)
        }
    }

    private func read<T>(_ body: (Database) throws -> T) throws(JournalError) -> T {
        do {
            return try queue.inDatabase(body)
        } catch {
            throw Self.journalError(error, path: path)
        }
    }

    static func journalError(_ error: any Error, path: String) -> JournalError {
        if let error = error as? JournalError {
            return error
        }
        guard let error = error as? DatabaseError else {
            return .storage(path: path, code: -1, detail: "\(error)")
        }
        let detail = error.message ?? "\(error)"
        switch error.resultCode {
        case .SQLITE_FULL:
            return .diskFull(path: path)
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            return .corrupt(path: path, detail: detail)
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return .inUse(path: path)
        case .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_READONLY:
            return .cannotOpen(path: path, detail: detail)
        default:
            return .storage(path: path, code: error.resultCode.rawValue, detail: detail)
        }
    }
}

/// Events as stored: the sequence numbers of the first and the last, and their JSON array.
struct EncodedRow: Sendable {
    let first: Int64
    let last: Int64
    let payload: Data
}

extension JournalRecordKind {
    /// The key of the kind's version in `journal_meta`.
    var metaKey: String {
        switch self {
        case .state: "schema:state"
        case .events: "schema:events"
        case .mutations(let store): "schema:mutations:" + store
        case .confirmedValue(let store): "schema:confirmed:" + store
        }
    }

    init?(metaKey: String) {
        switch metaKey {
        case "schema:state": self = .state
        case "schema:events": self = .events
        case let key where key.hasPrefix("schema:mutations:"):
            self = .mutations(store: String(key.dropFirst("schema:mutations:".count)))
        case let key where key.hasPrefix("schema:confirmed:"):
            self = .confirmedValue(store: String(key.dropFirst("schema:confirmed:".count)))
        default: return nil
        }
    }
}
