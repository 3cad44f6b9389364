import Foundation
import StateLoopServer
import StateLoopWire
import Synchronization
import Testing

@Suite("SQLite store", .timeLimit(.minutes(2)))
struct SQLiteStoreTests {
    let key = ResourceKey(resource: "notes", id: "ann")

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
