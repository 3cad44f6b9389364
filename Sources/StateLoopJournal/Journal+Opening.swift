import Foundation

/// Opening a journal: the checks of an existing file, its migration, and the decoding of what it
/// holds.
extension Journal {
    struct Opened {
        let database: JournalDatabase
        let restored: Restored
        let lastSequence: Int64
        var recovery: JournalRecovery
        let migration: JournalMigrationReport?
    }

    static func open(path: String, configuration: JournalConfiguration) throws(JournalError) -> Opened {
        let existed = FileManager.default.fileExists(atPath: path)
        do {
            return try read(path: path, configuration: configuration, existed: existed)
        } catch  where error.isUnreadableData && configuration.unreadable == .setAsideAndStartFresh {
            let setAside = try JournalFiles.setAside(path)
            var fresh = try read(path: path, configuration: configuration, existed: false)
            fresh.recovery = .startedFresh(after: error, setAsideAt: setAside)
            return fresh
        }
    }

    private static func read(path: String, configuration: JournalConfiguration, existed: Bool) throws(JournalError) -> Opened {
        // A file with a WAL beside it (a crash image) is checked, and read whole when it needs
        // no migration, through a read-only connection before one that can write touches it:
        // closing a writing connection checkpoints the WAL into the main file, so a file found
        // unreadable would not be set aside (or, with `.fail`, left) as the crash left it.
        // Without a WAL, a writer's close changes nothing, and one connection does.
        let hasWAL = FileManager.default.fileExists(atPath: path + "-wal")
        var examined: Examined?
        if existed && hasWAL {
            // The reader shares the WAL through a `-shm` file it may create: removed after it,
            // so that the files are the ones found, and no more.
            let hadSHM = FileManager.default.fileExists(atPath: path + "-shm")
            defer { if !hadSHM { try? FileManager.default.removeItem(atPath: path + "-shm") } }
            let reader = try JournalDatabase(path: path, durability: configuration.durability, readOnly: true)
            defer { reader.close() }
            examined = try examine(reader, configuration: configuration)
        }
        let database = try JournalDatabase(path: path, durability: configuration.durability)
        do {
            if existed && !hasWAL {
                examined = try examine(database, configuration: configuration)
            }
            if examined == nil {
                try database.createTablesIfNeeded()
            }
            let migration = try migrate(database, planned: examined?.migrator, configuration: configuration)
            // After the migration: a journal that fails one is left exactly as it was.
            try database.createTablesIfNeeded()
            var contents = examined?.contents ?? Contents()
            if examined != nil && examined?.contents == nil {
                contents = try decode(database, configuration: configuration)
            }
            try database.setClosedCleanly(false)
            let recovery: JournalRecovery =
                examined != nil
                ? .restored(snapshotSequence: contents.restored.snapshotSequence, replayedEvents: contents.restored.events.count)
                : .created
            return Opened(
                database: database, restored: contents.restored, lastSequence: contents.lastSequence,
                recovery: recovery, migration: migration
            )
        } catch {
            database.close()
            throw JournalDatabase.journalError(error, path: path)
        }
    }

    /// Migrates the file to the app's schema, or records the app's versions where nothing needs
    /// migrating (a new file, a new store); `planned` is the plan made on the read-only
    /// connection, if any.
    private static func migrate(
        _ database: JournalDatabase, planned: JournalMigrator?, configuration: JournalConfiguration
    ) throws(JournalError) -> JournalMigrationReport? {
        let path = database.path
        let migrator: JournalMigrator
        if let planned {
            migrator = planned
        } else {
            migrator = try JournalMigrator(schema: configuration.schema, database: database)
        }
        guard migrator.isNeeded else {
            if migrator.versionsChanged {
                try database.setVersions(migrator.versions)
            }
            return nil
        }
        return try migrator.run(
            on: database,
            checkState: { sequence, payload throws(JournalError) in
                _ = try decodeSnapshot(payload, sequence: sequence, configuration: configuration, path: path)
            },
            checkEvents: { first, payload throws(JournalError) in
                let row = JournalRows.StoredRow(first: first, last: first, payload: payload)
                _ = try JournalRows.decode([row], as: Event.self) { sequence, error in
                    .undecodableEvent(
                        path: path, sequence: sequence, writtenByVersion: configuration.schema.version(of: .events),
                        detail: "\(error)"
                    )
                }
            }
        )
    }

    /// What the checks of an existing journal found.
    private struct Examined {
        /// The migration it needs, if any, and the versions to record.
        let migrator: JournalMigrator
        /// Its contents, decoded, when it needs no migration.
        let contents: Contents?
    }

    /// What an existing file holds, decoded.
    private struct Contents {
        var restored = Restored(snapshot: nil, snapshotSequence: nil, events: [])
        var lastSequence: Int64 = 0
    }

    /// Checks an existing file and plans its migration; decodes it when it needs none. Reads
    /// only. `nil` for a file with no journal in it yet.
    private static func examine(_ reader: JournalDatabase, configuration: JournalConfiguration) throws(JournalError) -> Examined? {
        guard try reader.inspect() > 0 else { return nil }
        // Every page is checked only after a session that did not end cleanly: the check reads
        // the whole file, and after a clean close the pages read below are checked as they
        // are read (a damaged one is an error, and the file is set aside all the same).
        if try !reader.closedCleanly() {
            try reader.checkPages()
        } else {
            // A file cut short after a clean close passes the pages it reads and fails to
            // decode: told apart here from a change of the app's types.
            try reader.checkLength()
        }
        let migrator = try JournalMigrator(schema: configuration.schema, database: reader)
        let contents = migrator.isNeeded ? nil : try decode(reader, configuration: configuration)
        return Examined(migrator: migrator, contents: contents)
    }

    /// Decodes the saved state and the events after it. Reads only.
    private static func decode(_ reader: JournalDatabase, configuration: JournalConfiguration) throws(JournalError) -> Contents {
        let path = reader.path
        var contents = Contents()
        if let snapshot = try reader.snapshot() {
            contents.restored.snapshot = try decodeSnapshot(
                snapshot.payload, sequence: snapshot.sequence, configuration: configuration, path: path
            )
            contents.restored.snapshotSequence = snapshot.sequence
        }
        contents.lastSequence = contents.restored.snapshotSequence ?? 0
        var rows: [JournalRows.StoredRow] = []
        try reader.forEachRow(after: contents.lastSequence) { first, last, payload in
            rows.append(JournalRows.StoredRow(first: first, last: last, payload: payload))
        }
        contents.restored.events = try JournalRows.decode(rows, as: Event.self) { sequence, error in
            .undecodableEvent(
                path: path, sequence: sequence, writtenByVersion: configuration.schema.version(of: .events),
                detail: "\(error)"
            )
        }
        contents.lastSequence = rows.last?.last ?? contents.lastSequence
        return contents
    }

    private static func decodeSnapshot(
        _ payload: Data, sequence: Int64, configuration: JournalConfiguration, path: String
    ) throws(JournalError) -> State {
        do {
            return try JSONDecoder().decode(State.self, from: payload)
        } catch {
            throw .undecodableSnapshot(
                path: path, sequence: sequence, writtenByVersion: configuration.schema.version(of: .state),
                detail: "\(error)"
            )
        }
    }
}
