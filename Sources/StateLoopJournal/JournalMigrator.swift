import Foundation
import GRDB

/// Brings the records of an opened journal to the versions of the app's ``JournalSchema``, in
/// one transaction: a crash, a failing migration or a migrated record that no longer decodes
/// leaves the file as it was.
///
/// Planned against a read-only connection (so that a journal that cannot be migrated is set
/// aside untouched), run on the writer.
struct JournalMigrator {
    /// What one kind needs: the stored version and the steps from it.
    private struct Work: Sendable {
        let kind: JournalRecordKind
        let from: Int
        let steps: [JournalSchema.Step]
    }

    let path: String
    /// The versions to record once migrated: every kind the file holds or the schema declares.
    let versions: [JournalRecordKind: Int]
    /// Whether the recorded versions differ from `versions` (a new file, a new store).
    let versionsChanged: Bool
    /// Whether the file is in format 1 (one row per event), rewritten in the current format by
    /// the migration's transaction.
    let upgradesFormat: Bool
    private let work: [Work]

    /// Plans the migration of the file `database` reads.
    ///
    /// - Throws: ``JournalError/newerSchema(path:kind:stored:expected:)`` or
    ///   ``JournalError/noMigrationPath(path:kind:stored:expected:)`` for a kind that holds
    ///   records and cannot be brought to the app's version.
    init(schema: JournalSchema, database: JournalDatabase) throws(JournalError) {
        path = database.path
        let format = try database.inspect()
        upgradesFormat = format > 0 && format < JournalDatabase.format
        let stored = try database.storedVersions()
        let populated = try database.populatedKinds()
        var versions: [JournalRecordKind: Int] = [:]
        var work: [Work] = []
        let kinds = populated.union(schema.declaredKinds).union([.state, .events])
        for kind in kinds.sorted(by: { $0.migrationOrder < $1.migrationOrder }) {
            let expected = schema.version(of: kind)
            versions[kind] = expected
            // A kind with no records has nothing to misread: it simply takes the app's version.
            guard populated.contains(kind) else { continue }
            let from = stored[kind] ?? 1
            let steps = try schema.steps(for: kind, from: from, path: path)
            if !steps.isEmpty {
                work.append(Work(kind: kind, from: from, steps: steps))
            }
        }
        self.versions = versions
        self.versionsChanged = versions.contains { stored[$0.key] != $0.value }
        self.work = work
    }

    /// Whether any record must be rewritten.
    var isNeeded: Bool { !work.isEmpty || upgradesFormat }

    /// Migrates every record that needs it and records the new versions, in one transaction.
    ///
    /// - Parameters:
    ///   - checkState: Throws when a migrated state (saved after the event with the given
    ///     sequence number) does not decode as the app's `State`.
    ///   - checkEvents: The same for a migrated row of events, the sequence number of its first
    ///     event, and its JSON array.
    func run(
        on database: JournalDatabase,
        checkState: (Int64, Data) throws(JournalError) -> Void,
        checkEvents: @escaping @Sendable (Int64, Data) throws(JournalError) -> Void
    ) throws(JournalError) -> JournalMigrationReport {
        var report = JournalMigrationReport(
            migrated: work.map { .init(kind: $0.kind, from: $0.from, to: versions[$0.kind] ?? $0.from) },
            droppedEvents: 0,
            droppedMutations: 0
        )
        let coder = Coder(path: path)
        try database.write { db in
            // The layout is brought up to date, and tables added since the file was created are
            // created, here, so that a migration that fails changes nothing at all.
            if upgradesFormat {
                try JournalDatabase.upgradeFormat(in: db)
            }
            try JournalDatabase.createTables(in: db)
            for item in work {
                switch item.kind {
                case .state:
                    try migrateSnapshot(item, db, coder, checkState)
                case .events:
                    report.droppedEvents += try migrateEvents(item, db, checkEvents)
                case .mutations(let store):
                    report.droppedMutations += try migrateMutations(item, of: store, db, coder)
                case .confirmedValue(let store):
                    try migrateConfirmed(item, of: store, db, coder)
                }
            }
            try JournalDatabase.setVersions(versions, in: db)
        }
        return report
    }

    // MARK: Kinds

    private func migrateSnapshot(
        _ item: Work, _ db: Database, _ coder: Coder, _ check: (Int64, Data) throws(JournalError) -> Void
    ) throws {
        guard let row = try Row.fetchOne(db, sql: "SELECT sequence, payload FROM journal_snapshot") else { return }
        let sequence: Int64 = row[0]
        guard let migrated = try coder.apply(item, to: row[1], record: "the saved state") else {
            throw JournalError.migrationFailed(path: path, kind: .state, from: item.from, detail: "a state cannot be dropped")
        }
        try check(sequence, migrated)
        try db.execute(
            sql: "UPDATE journal_snapshot SET payload = ?, version = ?",
            arguments: [migrated, versions[.state]]
        )
    }

    /// Migrates each event of each row; a row whose events were all dropped goes. Returns the
    /// number of events dropped.
    private func migrateEvents(
        _ item: Work, _ db: Database, _ check: @escaping @Sendable (Int64, Data) throws(JournalError) -> Void
    ) throws -> Int {
        var dropped = 0
        var after: Int64 = .min
        let update = try db.cachedStatement(sql: "UPDATE journal_batches SET payload = ? WHERE last = ?")
        let delete = try db.cachedStatement(sql: "DELETE FROM journal_batches WHERE last = ?")
        // In pages, so that no cursor is open on the table while its rows change; the rows of a
        // page are migrated in parallel (each on its own), then written in order.
        while true {
            let page = try Row.fetchAll(
                db,
                sql: "SELECT first, last, payload FROM journal_batches WHERE last > ? ORDER BY last LIMIT 64",
                arguments: [after]
            ).map { JournalRows.StoredRow(first: $0[0], last: $0[1], payload: $0[2]) }
            guard let lastRow = page.last else { return dropped }
            let path = path
            let results = JournalRows.concurrentMap(page.count) { index in
                Result { () throws(JournalError) in
                    try Self.migrate(page[index], item, path: path, check: check)
                }
            }
            for (row, result) in zip(page, results) {
                let (payload, droppedHere) = try result.get()
                dropped += droppedHere
                if let payload {
                    try update.execute(arguments: [payload, row.last])
                } else {
                    try delete.execute(arguments: [row.last])
                }
            }
            after = lastRow.last
        }
    }

    /// One row of events migrated and checked: its new JSON array (`nil` when every event was
    /// dropped) and the number dropped.
    private static func migrate(
        _ row: JournalRows.StoredRow, _ item: Work, path: String,
        check: (Int64, Data) throws(JournalError) -> Void
    ) throws(JournalError) -> (Data?, Int) {
        let coder = Coder(path: path)
        let record = "events \(row.first)...\(row.last)"
        guard case .array(let events) = try coder.decode(row.payload, kind: item.kind, from: item.from, record: record) else {
            throw JournalError.migrationFailed(path: path, kind: item.kind, from: item.from, detail: "\(record) are not a JSON array")
        }
        var migrated: [JournalValue] = []
        for (offset, event) in events.enumerated() {
            if let value = try coder.apply(item, to: event, record: "event \(row.first + Int64(offset))") {
                migrated.append(value)
            }
        }
        guard !migrated.isEmpty else { return (nil, events.count) }
        let payload: Data
        do {
            payload = try coder.encode(.array(migrated))
        } catch {
            throw JournalError.migrationFailed(path: path, kind: item.kind, from: item.from, detail: "\(record): \(error)")
        }
        try check(row.first, payload)
        return (payload, events.count - migrated.count)
    }

    /// Migrates the mutation inside each stored pending mutation, keeping its id and status;
    /// a dropped one is kept aside, to be reported. Returns the number dropped.
    private func migrateMutations(_ item: Work, of store: String, _ db: Database, _ coder: Coder) throws -> Int {
        var dropped = 0
        let rows = try Row.fetchAll(
            db, sql: "SELECT position, payload FROM journal_mutations WHERE store = ? ORDER BY position",
            arguments: [store]
        )
        for row in rows {
            let position: Int = row[0]
            let payload: Data = row[1]
            var pending = try coder.decode(payload, kind: item.kind, from: item.from, record: "mutation \(position)")
            let migrated = try coder.apply(item, to: pending["mutation"] ?? .null, record: "mutation \(position)")
            if let migrated {
                pending["mutation"] = migrated
                try db.execute(
                    sql: "UPDATE journal_mutations SET payload = ? WHERE store = ? AND position = ?",
                    arguments: [try coder.encode(pending), store, position]
                )
            } else {
                let id = pending["id"]?["rawValue"]?.stringValue ?? pending["id"]?.stringValue ?? "?"
                let to = versions[item.kind] ?? item.from
                try JournalDatabase.drop(
                    store: store, id: id,
                    reason: "dropped by the journal's migration of \(item.kind) from version \(item.from) to \(to)",
                    payload: payload, in: db
                )
                try db.execute(
                    sql: "DELETE FROM journal_mutations WHERE store = ? AND position = ?",
                    arguments: [store, position]
                )
                dropped += 1
            }
        }
        return dropped
    }

    private func migrateConfirmed(_ item: Work, of store: String, _ db: Database, _ coder: Coder) throws {
        guard
            let payload = try Data.fetchOne(
                db, sql: "SELECT payload FROM journal_confirmed WHERE store = ?", arguments: [store]
            )
        else { return }
        var confirmed = try coder.decode(payload, kind: item.kind, from: item.from, record: "the confirmed value")
        // The value only: its version and last mutation id are the server's, not the app's.
        confirmed["value"] = try coder.apply(item, to: confirmed["value"] ?? .null, record: "the confirmed value")
        try db.execute(
            sql: "UPDATE journal_confirmed SET payload = ? WHERE store = ?",
            arguments: [try coder.encode(confirmed), store]
        )
    }

    /// The tree coding and the steps, with errors that name the record.
    private struct Coder {
        let path: String
        let encoder = JSONEncoder()
        let decoder = JSONDecoder()

        func decode(_ payload: Data, kind: JournalRecordKind, from: Int, record: String) throws(JournalError) -> JournalValue {
            do {
                return try decoder.decode(JournalValue.self, from: payload)
            } catch {
                throw .migrationFailed(path: path, kind: kind, from: from, detail: "\(record) is not JSON: \(error)")
            }
        }

        func encode(_ value: JournalValue) throws -> Data {
            try encoder.encode(value)
        }

        /// The record with every step applied, as stored bytes; `nil` when a step dropped it.
        func apply(_ item: Work, to payload: Data, record: String) throws(JournalError) -> Data? {
            let value = try decode(payload, kind: item.kind, from: item.from, record: record)
            return try apply(item, to: value, record: record).map { value throws(JournalError) in
                do {
                    return try encoder.encode(value)
                } catch {
                    throw .migrationFailed(path: path, kind: item.kind, from: item.from, detail: "\(record): \(error)")
                }
            }
        }

        /// The tree with every step applied; `nil` when a step dropped it.
        func apply(_ item: Work, to value: JournalValue, record: String) throws(JournalError) -> JournalValue? {
            var value = value
            for (offset, step) in item.steps.enumerated() {
                do {
                    guard let next = try step(value) else { return nil }
                    value = next
                } catch {
                    throw .migrationFailed(
                        path: path, kind: item.kind, from: item.from + offset, detail: "\(record): \(error)"
                    )
                }
            }
            return value
        }
    }
}

extension JournalRecordKind {
    /// State and events first, then the stores by name: a stable order for the work and its
    /// report.
    fileprivate var migrationOrder: String {
        switch self {
        case .state: "0"
        case .events: "1"
        case .mutations(let store): "2\(store)"
        case .confirmedValue(let store): "3\(store)"
        }
    }
}
