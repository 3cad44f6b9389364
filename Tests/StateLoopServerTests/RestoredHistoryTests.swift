import Foundation
import StateLoopServerPostgres
import StateLoopWire
import TestSupport
import Testing

@testable import StateLoopServer

/// A store whose data is put back to an earlier copy (a restored backup) must not hand out
/// again the versions after the copy's: clients hold them, perhaps with other values, and drop
/// a version they do not find newer. The store notices at open and begins a new epoch.
@Suite("Restored history", .timeLimit(.minutes(5)))
struct RestoredHistoryTests {
    let keys = ["a", "b", "c", "d"].map { ResourceKey(resource: "notes", id: $0) }

    @Test(
        "SQLite: a backup of a running store put back after four more commits: the reopened store begins a new epoch, and no version it hands out was seen with another value"
    )
    func sqliteRestoredBackup() async throws {
        let folder = try TemporaryFolder()
        let (path, backup) = (folder.file("server.sqlite"), folder.file("backup.sqlite"))
        let seen = SeenVersions()
        let firstEpoch: UInt64
        do {
            let store = try SQLiteStore(path: path)
            firstEpoch = store.epoch
            #expect(store.epochRestart == nil)
            for key in keys.prefix(3) { seen.add(try await store.write(key.id + "1", to: key)) }
            try backUp(path, to: backup)
            for (key, text) in [(keys[0], "a2"), (keys[1], "b2"), (keys[0], "a3"), (keys[3], "d1")] {
                seen.add(try await store.write(text, to: key))
            }
        }
        try putBack(backup, at: path)

        let reopened = try SQLiteStore(path: path)
        #expect(reopened.epoch > firstEpoch)
        #expect(
            reopened.epochRestart == EpochRestart(previousEpoch: firstEpoch, epoch: reopened.epoch, reason: .feedBehindMark(position: 3, mark: 7)))
        try await expectNoVersionReused(reopened, seen: seen)
    }

    @Test(
        "SQLite: a backup put back after rows alone were written: the reopened store begins a new epoch, so rows' versions and cookies are not reused"
    )
    func sqliteRestoredRows() async throws {
        let folder = try TemporaryFolder()
        let (path, backup) = (folder.file("server.sqlite"), folder.file("backup.sqlite"))
        let firstEpoch: UInt64
        let key = ResourceKey(resource: "tasks", id: "t1")
        do {
            let store = try SQLiteStore(path: path)
            firstEpoch = store.epoch
            _ = try await store.write { try $0.writeRow(Data(#"{"n":1}"#.utf8), fields: ["n": .integer(1)], to: key) }
            try backUp(path, to: backup)
            _ = try await store.write { try $0.writeRow(Data(#"{"n":2}"#.utf8), fields: ["n": .integer(2)], to: key) }
        }
        try putBack(backup, at: path)

        let reopened = try SQLiteStore(path: path)
        #expect(reopened.epoch > firstEpoch)
        #expect(reopened.epochRestart?.reason == .feedBehindMark(position: 1, mark: 2))
    }

    @Test("SQLite: after a restore, two stores opening the file at once begin one new epoch between them; the next open keeps it")
    func sqliteOneNewEpoch() async throws {
        let folder = try TemporaryFolder()
        let (path, backup) = (folder.file("server.sqlite"), folder.file("backup.sqlite"))
        let firstEpoch: UInt64
        do {
            let store = try SQLiteStore(path: path)
            firstEpoch = store.epoch
            _ = try await store.write("a1", to: keys[0])
            try backUp(path, to: backup)
            _ = try await store.write("a2", to: keys[0])
        }
        try putBack(backup, at: path)

        let opening = (0..<2).map { _ in Task.detached { try SQLiteStore(path: path) } }
        var opened: [SQLiteStore] = []
        for task in opening { opened.append(try await task.value) }
        #expect(opened[0].epoch == opened[1].epoch)
        #expect(opened[0].epoch > firstEpoch)
        #expect(opened.compactMap(\.epochRestart).count == 1)
        let epoch = opened[0].epoch
        opened.removeAll()

        let again = try SQLiteStore(path: path)
        #expect(again.epoch == epoch)
        #expect(again.epochRestart == nil)
        #expect(try await again.read(keys[0], lastMutationIDOf: nil, scope: "").value?.version == Version(epoch: epoch, counter: 1))
    }

    @Test(
        "SQLite: a clean reopen, a second store beside the first, and a reopen whose mark was lost keep the epoch; each leaves a mark that covers the file"
    )
    func sqliteCleanReopenKeepsEpoch() async throws {
        let folder = try TemporaryFolder()
        let path = folder.file("server.sqlite")
        let markPath = HighWaterMark.path(for: path)
        let epoch: UInt64
        do {
            let store = try SQLiteStore(path: path)
            epoch = store.epoch
            #expect(store.highWaterMarkPath == markPath)
            _ = try await store.write("a1", to: keys[0])
            let beside = try SQLiteStore(path: path)
            #expect(beside.epoch == epoch && beside.epochRestart == nil)
            _ = try await store.write("b1", to: keys[1])
            _ = try await beside.write("a2", to: keys[0])
            #expect(try mark(at: markPath)?.position == 3)
        }
        do {
            let reopened = try SQLiteStore(path: path)
            #expect(reopened.epoch == epoch && reopened.epochRestart == nil)
        }
        // An operator who copies the data file alone: no mark, no information, no new epoch.
        try FileManager.default.removeItem(atPath: markPath)
        let reopened = try SQLiteStore(path: path)
        #expect(reopened.epoch == epoch && reopened.epochRestart == nil)
        let rewritten = try #require(try mark(at: markPath))
        #expect(rewritten.epoch == epoch && rewritten.position == 3)
        #expect(try await reopened.write("c1", to: keys[2]).version == Version(epoch: epoch, counter: 1))
        #expect(try mark(at: markPath)?.position == 4)
    }

    @Test(
        "SQLite: a mark ahead of the file (a power cut that kept the mark and lost the commit) or torn costs one new epoch, values kept; the next open keeps it"
    )
    func sqliteMarkAheadCostsOneEpoch() async throws {
        let folder = try TemporaryFolder()
        let path = folder.file("server.sqlite")
        let markPath = HighWaterMark.path(for: path)
        let firstEpoch: UInt64
        do {
            let store = try SQLiteStore(path: path)
            firstEpoch = store.epoch
            _ = try await store.write("a1", to: keys[0])
            _ = try await store.write("b1", to: keys[1])
        }
        var ahead = try #require(try mark(at: markPath))
        ahead.position += 1
        ahead.time += 5
        try Data(HighWaterMark.encode(ahead).utf8).write(to: URL(fileURLWithPath: markPath))

        let secondEpoch: UInt64
        do {
            let store = try SQLiteStore(path: path)
            secondEpoch = store.epoch
            #expect(store.epochRestart == EpochRestart(previousEpoch: firstEpoch, epoch: secondEpoch, reason: .feedBehindMark(position: 2, mark: 3)))
            let read = try await store.read(keys[0], lastMutationIDOf: nil, scope: "")
            #expect(read.value?.version == Version(epoch: secondEpoch, counter: 1) && read.value?.json == Data("a1".utf8))
        }
        do {
            let store = try SQLiteStore(path: path)
            #expect(store.epoch == secondEpoch && store.epochRestart == nil)
        }

        try Data("stateloop-high-water-mark 1 g=0000".utf8).write(to: URL(fileURLWithPath: markPath))
        let torn = try SQLiteStore(path: path)
        #expect(torn.epoch > secondEpoch)
        #expect(torn.epochRestart?.reason == .unreadableMark)
        let read = try await torn.read(keys[1], lastMutationIDOf: nil, scope: "")
        #expect(read.value?.version == Version(epoch: torn.epoch, counter: 1) && read.value?.json == Data("b1".utf8))
    }

    @Test(
        "PostgreSQL: a database dumped, written four more times, dropped and restored from the dump: the instances reopening it begin one new epoch, and no version handed out was seen with another value",
        .enabled(if: StoreKind.postgresTestsEnabled, "STATELOOP_POSTGRES_TESTS=0")
    )
    func postgresRestoredDump() async throws {
        guard postgresIsInstalled() else { return }
        let url = try await ThrowawayPostgres.newDatabaseURL()
        let server = try await ThrowawayPostgres.shared()
        let database = try #require(URLComponents(string: url)).path.dropFirst()
        let seen = SeenVersions()
        let firstEpoch: UInt64
        let dump: String
        do {
            let store = try await PostgresStore(url: url, deadline: hangGuard)
            defer { store.close() }
            firstEpoch = store.epoch
            #expect(store.epochRestart == nil)
            for key in keys.prefix(3) { seen.add(try await store.write(key.id + "1", to: key)) }
            // Every part of the identity was read and kept (a part that fails to read is
            // skipped silently, so a broken query would go unnoticed otherwise).
            try await server.execute(
                """
                DO $$ BEGIN
                IF (SELECT value FROM stateloop_meta WHERE key = 'system_identifier') IS DISTINCT FROM (SELECT system_identifier FROM pg_control_system())
                OR (SELECT value FROM stateloop_meta WHERE key = 'timeline') IS DISTINCT FROM 1
                OR (SELECT value FROM stateloop_meta WHERE key = 'database_oid') IS DISTINCT FROM (SELECT oid::bigint FROM pg_database WHERE datname = current_database())
                OR (SELECT value FROM stateloop_meta WHERE key = 'values_table_oid') IS DISTINCT FROM 'stateloop_values'::regclass::oid::bigint
                THEN RAISE EXCEPTION 'the stored identity is incomplete or wrong'; END IF;
                END $$
                """, in: String(database))
            dump = try await server.dump(String(database))
            for (key, text) in [(keys[0], "a2"), (keys[1], "b2"), (keys[0], "a3"), (keys[3], "d1")] {
                seen.add(try await store.write(text, to: key))
            }
        }
        try await server.execute("DROP DATABASE \(database) WITH (FORCE)")
        _ = try await server.createDatabase(String(database))
        try await server.load(dump, into: String(database))

        // Two instances starting together on the restored database.
        async let first = PostgresStore(url: url, deadline: hangGuard)
        async let second = PostgresStore(url: url, deadline: hangGuard)
        let instances = try await [first, second]
        defer { for instance in instances { instance.close() } }
        #expect(instances[0].epoch == instances[1].epoch)
        #expect(instances[0].epoch > firstEpoch)
        let restarts = instances.compactMap(\.epochRestart)
        #expect(restarts.count == 1)
        if case .databaseReplaced(let changed) = restarts.first?.reason {
            #expect(changed.contains("database_oid") && changed.contains("values_table_oid"))
        } else {
            Issue.record("expected a replaced database, found \(String(describing: restarts.first))")
        }
        try await expectNoVersionReused(instances[0], seen: seen)

        let again = try await PostgresStore(url: url, deadline: hangGuard)
        defer { again.close() }
        #expect(again.epoch == instances[0].epoch && again.epochRestart == nil)
    }

    @Test(
        "PostgreSQL: a clean dump replayed over the database it came from, after more writes: the reopened store begins a new epoch",
        .enabled(if: StoreKind.postgresTestsEnabled, "STATELOOP_POSTGRES_TESTS=0")
    )
    func postgresRestoredInPlace() async throws {
        guard postgresIsInstalled() else { return }
        let url = try await ThrowawayPostgres.newDatabaseURL()
        let server = try await ThrowawayPostgres.shared()
        let database = String(try #require(URLComponents(string: url)).path.dropFirst())
        let seen = SeenVersions()
        let firstEpoch: UInt64
        let dump: String
        do {
            let store = try await PostgresStore(url: url, deadline: hangGuard)
            defer { store.close() }
            firstEpoch = store.epoch
            seen.add(try await store.write("a1", to: keys[0]))
            dump = try await server.dump(database, clean: true)
            seen.add(try await store.write("a2", to: keys[0]))
            seen.add(try await store.write("b1", to: keys[1]))
        }
        try await server.load(dump, into: database)

        let reopened = try await PostgresStore(url: url, deadline: hangGuard)
        defer { reopened.close() }
        #expect(reopened.epoch > firstEpoch)
        #expect(
            reopened.epochRestart
                == EpochRestart(previousEpoch: firstEpoch, epoch: reopened.epoch, reason: .databaseReplaced(changed: ["values_table_oid"])))
        try await expectNoVersionReused(reopened, seen: seen)
    }

    @Test(
        "PostgreSQL: a new epoch begun by hand (for a restore the store cannot see) relabels every value; the next open keeps it",
        .enabled(if: StoreKind.postgresTestsEnabled, "STATELOOP_POSTGRES_TESTS=0")
    )
    func postgresNewEpochByHand() async throws {
        guard postgresIsInstalled() else { return }
        let url = try await ThrowawayPostgres.newDatabaseURL()
        let firstEpoch: UInt64
        do {
            let store = try await PostgresStore(url: url, deadline: hangGuard)
            defer { store.close() }
            firstEpoch = store.epoch
            _ = try await store.write("a1", to: keys[0])
            _ = try await store.write("a2", to: keys[0])
        }
        let begun = try await PostgresStore.startNewEpoch(url: url)
        #expect(begun > firstEpoch)
        let reopened = try await PostgresStore(url: url, deadline: hangGuard)
        defer { reopened.close() }
        #expect(reopened.epoch == begun && reopened.epochRestart == nil)
        #expect(try await reopened.read(keys[0], lastMutationIDOf: nil, scope: "").value?.version == Version(epoch: begun, counter: 2))
        let relabelled = try await reopened.changes(after: 0, limit: 10).last
        #expect(relabelled?.value.version == Version(epoch: begun, counter: 2) && relabelled?.value.json == Data("a2".utf8))
    }

    @Test(
        "PostgreSQL: a cluster promoted from standby (a failover, a point-in-time recovery) is on a new timeline: the reopened store begins a new epoch",
        .enabled(if: StoreKind.postgresTestsEnabled, "STATELOOP_POSTGRES_TESTS=0")
    )
    func postgresNewTimeline() async throws {
        guard postgresIsInstalled() else { return }
        // A server of its own: the shared one must not change under the other tests.
        let server = try await ThrowawayPostgres.start()
        do {
            try await promotedCluster(server)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    private func promotedCluster(_ server: ThrowawayPostgres) async throws {
        let database = try await server.createDatabase("timeline")
        let url = "postgres://\(server.user)@127.0.0.1:\(server.port)/\(database)"
        let firstEpoch: UInt64
        do {
            let store = try await PostgresStore(url: url, deadline: hangGuard)
            defer { store.close() }
            firstEpoch = store.epoch
            _ = try await store.write("a1", to: keys[0])
        }
        try await server.promoteAsStandby()

        let reopened = try await PostgresStore(url: url, deadline: hangGuard)
        defer { reopened.close() }
        #expect(reopened.epoch > firstEpoch)
        #expect(
            reopened.epochRestart == EpochRestart(previousEpoch: firstEpoch, epoch: reopened.epoch, reason: .databaseReplaced(changed: ["timeline"])))
        #expect(try await reopened.read(keys[0], lastMutationIDOf: nil, scope: "").value?.version == Version(epoch: reopened.epoch, counter: 1))
    }

    /// Reads each key and writes it again on `store`: every version met must be new, or seen
    /// with the same value.
    private func expectNoVersionReused(_ store: any ServerStore, seen: SeenVersions) async throws {
        for key in keys {
            if let value = try await store.read(key, lastMutationIDOf: nil, scope: "").value {
                seen.expectNotReused(value)
            }
            seen.expectNotReused(try await store.write(key.id + "-after", to: key))
        }
    }
}

/// Every value a client may have seen, by key and version.
private final class SeenVersions {
    private var values: [String: Data] = [:]

    private func label(_ value: StoredValue) -> String {
        "\(value.key.resource)/\(value.key.id)@\(value.version.epoch).\(value.version.counter)"
    }

    func add(_ value: StoredValue) {
        values[label(value)] = value.json
    }

    /// Records an issue if `value`'s version was seen with another value.
    func expectNotReused(_ value: StoredValue, sourceLocation: SourceLocation = #_sourceLocation) {
        if let earlier = values[label(value)], earlier != value.json {
            Issue.record(
                "\(label(value)) was seen as \(String(decoding: earlier, as: UTF8.self)), now \(String(decoding: value.json, as: UTF8.self))",
                sourceLocation: sourceLocation
            )
        }
    }
}

extension ServerStore {
    /// Writes `text` to `key` in a transaction of its own; returns the value with its version.
    fileprivate func write(_ text: String, to key: ResourceKey) async throws -> StoredValue {
        let version = try await write { try $0.write(Data(text.utf8), to: key) }
        return StoredValue(key: key, version: version, json: Data(text.utf8))
    }
}

/// A folder of its own for a test, deleted with it.
private final class TemporaryFolder {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("stateloop-restore-\(UUID())")

    init() throws {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    func file(_ name: String) -> String {
        url.appendingPathComponent(name).path
    }
}

/// The mark at `path`, if it reads.
private func mark(at path: String) throws -> HighWaterMark.Record? {
    guard case .record(let record) = HighWaterMark.read(at: path) else { return nil }
    return record
}

/// Backs up the SQLite file at `path`, which a store has open, as an operator would: with the
/// `sqlite3` shell's `.backup` when it is installed, else by copying the file and its WAL
/// while no write runs (the test writes nothing meanwhile).
private func backUp(_ path: String, to backup: String) throws {
    let shell = "/usr/bin/sqlite3"
    if FileManager.default.isExecutableFile(atPath: shell) {
        let output = backup + ".output"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let status = try spawnAndWait([shell, path, ".backup '\(backup)'"], output: output, includingErrors: true)
        try #require(status == 0, Comment(rawValue: (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""))
    } else {
        try FileManager.default.copyItem(atPath: path, toPath: backup)
        if FileManager.default.fileExists(atPath: path + "-wal") {
            try FileManager.default.copyItem(atPath: path + "-wal", toPath: backup + "-wal")
        }
    }
}

/// Puts the copy at `backup` in place of the (closed) store file at `path`, as an operator
/// restoring it by hand would; the mark beside `path` stays.
private func putBack(_ backup: String, at path: String) throws {
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    try FileManager.default.copyItem(atPath: backup, toPath: path)
    if FileManager.default.fileExists(atPath: backup + "-wal") {
        try FileManager.default.copyItem(atPath: backup + "-wal", toPath: path + "-wal")
    }
}
