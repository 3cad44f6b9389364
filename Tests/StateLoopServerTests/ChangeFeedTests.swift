import Foundation
import ServerTestApp
import StateLoopServer
import StateLoopWire
import Synchronization
import Testing

/// The store's durable change feed: every write kept in its commit's transaction, readable from
/// a reopened file, timed by the store's clock, naming the mutation that caused it.
@Suite("SQLite store: change feed", .timeLimit(.minutes(5)))
struct ChangeFeedTests {
    let ann = ResourceKey(resource: "notes", id: "ann")
    let bob = ResourceKey(resource: "notes", id: "bob")

    @Test("every write is kept with its commit, time and version; a reopened file reads the same feed; a rolled-back write leaves none")
    func feedSurvivesReopen() async throws {
        try await withStoreFile { path in
            let clock = FeedClock()
            let observed = CommitLog()
            do {
                let store = try SQLiteStore(path: path, now: clock.read)
                store.observeCommits { observed.append($0) }
                clock.set(1_000)
                _ = try await store.write { transaction in
                    _ = try transaction.write(Data("1".utf8), to: ann)
                    _ = try transaction.write(Data("2".utf8), to: bob)
                }
                clock.set(2_000)
                struct Boom: Error {}
                await #expect(throws: Boom.self) {
                    try await store.write { transaction in
                        _ = try transaction.write(Data("lost".utf8), to: ann)
                        throw Boom()
                    }
                }
                _ = try await store.write { try $0.write(Data("3".utf8), to: ann) }
            }
            let store = try SQLiteStore(path: path)
            let feed = try store.changes(after: 0, limit: 100)
            #expect(feed.map { String(decoding: $0.value.json, as: UTF8.self) } == ["1", "2", "3"])
            #expect(feed.map(\.value.key) == [ann, bob, ann])
            #expect(feed.map(\.value.version.counter) == [1, 1, 2])
            #expect(feed.map(\.time.timeIntervalSince1970) == [1_000, 1_000, 2_000])
            #expect(feed[0].commit == feed[0].sequence && feed[1].commit == feed[0].sequence)
            #expect(feed[2].commit == feed[2].sequence && feed[2].sequence > feed[1].sequence)
            #expect(feed.allSatisfy { $0.cause == nil })
            // What the observers heard names the same positions, so a reader can catch up after it.
            #expect(observed.all.map(\.feed) == [feed[0].sequence...feed[1].sequence, feed[2].sequence...feed[2].sequence])
            let next = try store.changes(after: feed[0].sequence, limit: 1)
            #expect(next.map(\.sequence) == [feed[1].sequence])
        }
    }

    @Test("a mutation's writes name it and its principal; a refusal and a repeat of the id add nothing")
    func feedNamesTheMutation() async throws {
        let store = try SQLiteStore()
        try await withNotesServer(store: store) { _, client in
            let first = try await client.mutate("me/notes", as: "ann", Notes.NewNote(text: "one"), id: "c1:1")
            let repeated = try await client.mutate("me/notes", as: "ann", Notes.NewNote(text: "one"), id: "c1:1")
            let refused = try await client.mutate("me/notes", as: "ann", Notes.NewNote(text: ""), id: "c1:2")
            #expect(first.status == 200 && repeated.status == 200 && refused.status == 409)
        }
        let feed = try store.changes(after: 0, limit: 100)
        #expect(feed.map(\.cause) == [ChangeCause?.some(ChangeCause(scope: "ann", mutation: MutationID(rawValue: "c1:1")))])
        #expect(try store.clientProgress() == [ClientProgress(scope: "ann", client: ClientID(rawValue: "c1"), lastMutationID: 2)])
    }

    @Test(
        "a new epoch adds every value to the feed at its new version, earlier entries keep theirs; pruning by time keeps the newest commit whole, so positions keep rising"
    )
    func newEpochAndPruning() async throws {
        try await withStoreFile { path in
            let clock = FeedClock()
            let oldEpoch: UInt64
            do {
                let store = try SQLiteStore(path: path, now: clock.read)
                oldEpoch = store.epoch
                clock.set(1_000)
                _ = try await store.write { try $0.write(Data("1".utf8), to: ann) }
                _ = try await store.write { try $0.write(Data("2".utf8), to: bob) }
            }
            let epoch = try SQLiteStore.startNewEpoch(at: path, now: Date(timeIntervalSince1970: 3_000))
            let store = try SQLiteStore(path: path, now: clock.read)
            let feed = try store.changes(after: 0, limit: 100)
            #expect(feed.count == 4)
            // Each entry keeps the epoch it was written in: history read later stays true.
            #expect(feed.prefix(2).allSatisfy { $0.value.version == Version(epoch: oldEpoch, counter: 1) })
            let relabelled = Array(feed.suffix(2))
            #expect(relabelled.map(\.value.key) == [ann, bob])
            #expect(relabelled.allSatisfy { $0.value.version == Version(epoch: epoch, counter: 1) && $0.commit == relabelled[0].sequence })
            #expect(relabelled.allSatisfy { $0.time.timeIntervalSince1970 == 3_000 })

            #expect(try await store.forgetChanges(committedBefore: Date(timeIntervalSince1970: 2_000)) == 2)
            #expect(try store.changes(after: 0, limit: 100) == relabelled)
            // The newest commit (the new epoch's two entries) stays whole, however old: a new
            // entry still comes after every position handed out.
            #expect(try await store.forgetChanges(committedBefore: Date(timeIntervalSince1970: 3_500)) == 0)
            #expect(try store.changes(after: 0, limit: 100) == relabelled)
            clock.set(4_000)
            _ = try await store.write { try $0.write(Data("3".utf8), to: ann) }
            let after = try store.changes(after: 0, limit: 100)
            #expect(after.count == 3)
            #expect(after[2].sequence > feed.last!.sequence)
        }
    }

    private func withStoreFile(_ body: (String) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stateloop-feed-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await body(folder.appendingPathComponent("server.sqlite").path)
    }
}

/// A settable clock for the feed's times.
final class FeedClock: Sendable {
    private let seconds = Mutex<Double>(0)

    func set(_ value: Double) {
        seconds.withLock { $0 = value }
    }

    var read: @Sendable () -> Date {
        { Date(timeIntervalSince1970: self.seconds.withLock { $0 }) }
    }
}
