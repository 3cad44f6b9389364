import Foundation
import StateLoopServer
import StateLoopWire
import Synchronization
import Testing

@Suite("SQLite store", .timeLimit(.minutes(5)))
struct SQLiteStoreTests {
    let key = ResourceKey(resource: "notes", id: "ann")

    @Test("a file that cannot be opened says why: a missing folder, a file that is not a database; nothing is created or changed")
    func openFailures() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stateloop-open-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = folder.appendingPathComponent("absent/data.sqlite").path
        do {
            _ = try SQLiteStore(path: missing)
            Issue.record("a store opened in a folder that does not exist")
        } catch let failure as SQLiteStore.OpenFailure {
            #expect(failure.description.contains("the folder \(folder.path)/absent does not exist"), "\(failure)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("absent").path))

        let foreign = folder.appendingPathComponent("notes.txt").path
        try Data("not a database, but someone's notes\n".utf8).write(to: URL(fileURLWithPath: foreign))
        do {
            _ = try SQLiteStore(path: foreign)
            Issue.record("a text file opened as a store")
        } catch let failure as SQLiteStore.OpenFailure {
            #expect(failure.description.contains("\(foreign) is not a SQLite database"), "\(failure)")
        }
        #expect(try String(contentsOfFile: foreign, encoding: .utf8) == "not a database, but someone's notes\n", "the file is left as it was")
    }

    @Test("the epoch is stored: a reopened file keeps it; only a restore or a new epoch changes it")
    func epochKeptAcrossReopen() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stateloop-store-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("server.sqlite").path
        let backup = folder.appendingPathComponent("backup.sqlite").path
        let epoch: UInt64
        do {
            let store = try SQLiteStore(path: path)
            epoch = store.epoch
            _ = try await store.write { try $0.write(Data("1".utf8), to: key) }
        }
        try FileManager.default.copyItem(atPath: path, toPath: backup)
        do {
            let reopened = try SQLiteStore(path: path)
            #expect(reopened.epoch == epoch)
            let version = try await reopened.write { try $0.write(Data("2".utf8), to: key) }
            #expect(version == Version(epoch: epoch, counter: 2))
        }
        let restored = try SQLiteStore.restore(from: backup, to: path)
        #expect(restored > epoch)
        let store = try SQLiteStore(path: path)
        #expect(store.epoch == restored)
        let read = try await store.read(key, lastMutationIDOf: nil, scope: "ann")
        #expect(read.value?.version == Version(epoch: restored, counter: 1))
        #expect(try SQLiteStore.startNewEpoch(at: path) > restored)
    }

    @Test(
        "a store in memory restored from its backup holds what the backup held, in an epoch later than the lost store's, each value in the feed at its new version; the store's clock decides the epoch"
    )
    func restoredInMemory() async throws {
        let time = Date(timeIntervalSince1970: 1_900_000_000)
        let store = try SQLiteStore(epoch: 7, now: { time }, blocking: true)
        let other = ResourceKey(resource: "notes", id: "bob")
        _ = try await store.write { try $0.write(Data("1".utf8), to: key) }
        let backup = try store.backup()
        #expect(backup.epoch == 7)
        _ = try await store.write { try $0.write(Data("2".utf8), to: key) }
        _ = try await store.write { try $0.write(Data("b".utf8), to: other) }
        // A lost store whose epoch is later than the clock's milliseconds: the restore goes
        // past it.
        let lost: UInt64 = 2_000_000_000_000
        let restored = try SQLiteStore(restoring: backup, after: lost, now: { time }, blocking: true)
        #expect(restored.epoch == lost + 1)
        let read = try await restored.read(key, lastMutationIDOf: nil, scope: "ann")
        #expect(read.value?.json == Data("1".utf8) && read.value?.version == Version(epoch: lost + 1, counter: 1))
        #expect(try await restored.read(other, lastMutationIDOf: nil, scope: "bob").value == nil, "written after the backup: gone")
        let newest = try restored.changes(after: 0, limit: 100).last
        #expect(newest?.value.version == Version(epoch: lost + 1, counter: 1) && newest?.value.key == key)
        // The store it was taken from goes on; a second restore from the same backup, after the
        // first, is later again; an epoch behind the clock takes the clock's milliseconds.
        #expect(try await store.read(key, lastMutationIDOf: nil, scope: "ann").value?.json == Data("2".utf8))
        #expect(try SQLiteStore(restoring: backup, after: restored.epoch, now: { time }).epoch == lost + 2)
        #expect(try SQLiteStore(restoring: backup, after: 8, now: { time }).epoch == 1_900_000_000_000)
    }
}

/// The commits a store's change feed delivered, in order.
final class CommitLog: Sendable {
    private let commits = Mutex<[CommittedChanges]>([])

    func append(_ changes: CommittedChanges) {
        commits.withLock { $0.append(changes) }
    }

    var count: Int { commits.withLock { $0.count } }
    var all: [CommittedChanges] { commits.withLock { $0 } }
    var values: [StoredValue] { commits.withLock { $0.flatMap(\.values) } }
}
