import Foundation
import ServerTestApp
import StateLoopServer
import StateLoopWire
import Synchronization
import TestSupport
import Testing

/// What every ``ServerStore`` guarantees, run against each store: SQLite in memory, and
/// PostgreSQL in a throwaway server the test starts (`ThrowawayPostgres`).
@Suite("Stores", .timeLimit(.minutes(5)))
struct StoreTests {
    let key = ResourceKey(resource: "notes", id: "ann")
    let other = ResourceKey(resource: "notes", id: "bob")

    @Test("each key has its own counter, raised in the transaction that writes it", arguments: StoreKind.enabled)
    func versionsPerKey(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            let first = try await store.write { try $0.write(Data("[1]".utf8), to: key) }
            let second = try await store.write { try $0.write(Data("[2]".utf8), to: key) }
            let elsewhere = try await store.write { try $0.write(Data("[3]".utf8), to: other) }
            #expect(first == Version(epoch: store.epoch, counter: 1))
            #expect(second == Version(epoch: store.epoch, counter: 2))
            #expect(elsewhere == Version(epoch: store.epoch, counter: 1))
            let read = try await store.read(key, lastMutationIDOf: nil, scope: "ann")
            #expect(read.value == StoredValue(key: key, version: second, json: Data("[2]".utf8)))
        }
    }

    @Test("a transaction that throws leaves nothing: no value, no version, no answer, no commit seen", arguments: StoreKind.enabled)
    func throwingTransactionCommitsNothing(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            let commits = CommitLog()
            store.observeCommits { commits.append($0) }
            _ = try await store.write { try $0.write(Data("1".utf8), to: key) }
            struct Boom: Error {}
            await #expect(throws: Boom.self) {
                try await store.write { transaction in
                    _ = try transaction.write(Data("2".utf8), to: key)
                    try transaction.remember(
                        RememberedAnswer(fingerprint: 1, status: 200, body: Data()), to: "c:1", scope: "ann", client: ClientID(rawValue: "c"),
                        sequence: 1)
                    try transaction.setLastMutationID(1, of: ClientID(rawValue: "c"), scope: "ann")
                    throw Boom()
                }
            }
            let after = try await store.read(key, lastMutationIDOf: ClientID(rawValue: "c"), scope: "ann")
            #expect(after.value?.version.counter == 1)
            #expect(after.value?.json == Data("1".utf8))
            #expect(after.lastMutationID == nil)
            #expect(try await store.write { try $0.answer(to: "c:1", scope: "ann") } == nil)
            #expect(commits.count == 1)
        }
    }

    @Test("the change feed sees every commit in commit order, with the versions allocated", arguments: StoreKind.enabled)
    func changeFeedInOrder(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            let commits = CommitLog()
            store.observeCommits { commits.append($0) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<50 {
                    group.addTask {
                        _ = try await store.write { try $0.write(Data("\(index)".utf8), to: key) }
                    }
                }
                try await group.waitForAll()
            }
            // A store may tell its observers after the write returns (PostgreSQL's follower
            // does): waited for, bounded.
            #expect(await eventually(within: .seconds(30)) { commits.count == 50 }, "\(commits.count) commits seen")
            #expect(commits.values.map(\.version.counter) == Array(1...50))
        }
    }

    @Test(
        "a write of the bytes a key holds is none: no counter, no feed entry, no value for the observers, its progress committed; a key without a value is always written",
        arguments: StoreKind.enabled)
    func unchangedWriteSkipped(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            let commits = CommitLog()
            store.observeCommits { commits.append($0) }
            let client = ClientID(rawValue: "c")
            let first = try await store.write { try $0.writeIfChanged(Data("null".utf8), to: key) }
            #expect(first == Version(epoch: store.epoch, counter: 1))
            let again = try await store.write { transaction in
                let version = try transaction.writeIfChanged(Data("null".utf8), to: key)
                try transaction.setLastMutationID(1, of: client, scope: "ann")
                return version
            }
            #expect(again == nil)
            let changed = try await store.write { try $0.writeIfChanged(Data("[1]".utf8), to: key) }
            #expect(changed == Version(epoch: store.epoch, counter: 2))
            let read = try await store.read(key, lastMutationIDOf: client, scope: "ann")
            #expect(read.value?.version.counter == 2 && read.lastMutationID == 1)
            let feed = try await store.changes(after: 0, limit: 100)
            #expect(feed.map { String(decoding: $0.value.json, as: UTF8.self) } == ["null", "[1]"])
            // A store may tell its observers after the write returns: waited for, bounded.
            #expect(await eventually(within: .seconds(30)) { commits.count == 3 }, "\(commits.count) commits seen")
            #expect(commits.all.map { $0.values.map(\.version.counter) } == [[1], [], [2]])
            #expect(commits.all.dropFirst().first?.progress == [ClientProgress(scope: "ann", client: client, lastMutationID: 1)])
        }
    }

    @Test("answers are kept per principal and forgotten once the client's later mutation is processed", arguments: StoreKind.enabled)
    func answersPrunedByProgress(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            let client = ClientID(rawValue: "c")
            let answer = RememberedAnswer(fingerprint: 7, status: 200, body: Data("{}".utf8))
            try await store.write { transaction in
                for sequence in UInt64(1)...3 {
                    try transaction.remember(answer, to: "c:\(sequence)", scope: "ann", client: client, sequence: sequence)
                    try transaction.setLastMutationID(sequence, of: client, scope: "ann")
                }
                try transaction.remember(answer, to: "c:1", scope: "bob", client: client, sequence: 1)
                try transaction.setLastMutationID(1, of: client, scope: "bob")
            }
            try await store.write { transaction in
                #expect(try transaction.answer(to: "c:1", scope: "ann") == nil)
                #expect(try transaction.answer(to: "c:2", scope: "ann") == nil)
                #expect(try transaction.answer(to: "c:3", scope: "ann") == answer)
                #expect(try transaction.answer(to: "c:1", scope: "bob") == answer)
                #expect(try transaction.lastMutationID(of: client, scope: "ann") == 3)
                // Progress never moves back.
                try transaction.setLastMutationID(2, of: client, scope: "ann")
                #expect(try transaction.lastMutationID(of: client, scope: "ann") == 3)
            }
        }
    }

    @Test(
        "pages of a resource's values by id prefix, either way, after a cursor; other prefixes and resources left out", arguments: StoreKind.enabled)
    func pagesByPrefix(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            let server = SyncServer(store: store, access: Notes.Rules())
            let rides = ServerResource("past-ride", of: Int.self)
            try await server.update { transaction in
                for number in 1...25 {
                    try transaction.write(number, to: rides, "ann/" + String(format: "%06d", number))
                }
                try transaction.write(99, to: rides, "anna/000001")
                try transaction.write(98, to: rides, "bob/000001")
                try transaction.write(97, to: ServerResource("other", of: Int.self), "ann/000001")
            }
            let pages = try await server.update { transaction in
                let newest = try transaction.values(of: rides, prefix: "ann/", limit: 10, descending: true)
                let next = try transaction.values(of: rides, prefix: "ann/", after: newest.last?.id, limit: 10, descending: true)
                let last = try transaction.values(of: rides, prefix: "ann/", after: next.last?.id, limit: 10, descending: true)
                let oldest = try transaction.values(of: rides, prefix: "ann/", limit: 3)
                return (newest.map(\.value), next.map(\.value), last.map(\.value), oldest.map(\.id))
            }
            #expect(pages.0 == Array((16...25).reversed()))
            #expect(pages.1 == Array((6...15).reversed()))
            #expect(pages.2 == Array((1...5).reversed()))
            #expect(pages.3 == ["ann/000001", "ann/000002", "ann/000003"])
        }
    }

    @Test("the change feed forgets what was committed before a cutoff, but keeps the newest commit whole, however old", arguments: StoreKind.enabled)
    func changesForgotten(_ kind: StoreKind) async throws {
        let clock = Mutex(Date(timeIntervalSince1970: 1_000))
        try await kind.withStore(now: { clock.withLock { $0 } }) { store in
            func commit(at seconds: TimeInterval, _ keys: [ResourceKey]) async throws {
                clock.withLock { $0 = Date(timeIntervalSince1970: seconds) }
                try await store.write { transaction in
                    for key in keys { _ = try transaction.write(Data("\(seconds)".utf8), to: key) }
                }
            }
            let start = try await store.changes(after: 0, limit: 1_000).last?.sequence ?? 0
            try await commit(at: 1_000, [key, other])
            try await commit(at: 2_000, [key])
            try await commit(at: 3_000, [key, other])
            let newest = Array(try await store.changes(after: start, limit: 100).suffix(2))
            #expect(newest.map(\.value.key) == [key, other] && newest[0].commit == newest[1].commit)

            #expect(try await store.forgetChanges(committedBefore: Date(timeIntervalSince1970: 2_500)) == 3)
            #expect(try await store.changes(after: 0, limit: 100) == newest)
            // The newest commit has two entries: neither goes, or a reader would see half of it.
            #expect(try await store.forgetChanges(committedBefore: Date(timeIntervalSince1970: 10_000)) == 0)
            #expect(try await store.changes(after: 0, limit: 100) == newest)
        }
    }

    @Test("clients silent since a cutoff are forgotten with their answers; others are kept", arguments: StoreKind.enabled)
    func idleClientsForgotten(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            let answer = RememberedAnswer(fingerprint: 1, status: 200, body: Data("{}".utf8))
            try await store.write { transaction in
                try transaction.remember(answer, to: "c:4", scope: "ann", client: ClientID(rawValue: "c"), sequence: 4)
                try transaction.setLastMutationID(4, of: ClientID(rawValue: "c"), scope: "ann")
            }
            #expect(try await store.forgetClients(idleSince: Date(timeIntervalSinceNow: -60)) == 0)
            #expect(try await store.read(key, lastMutationIDOf: ClientID(rawValue: "c"), scope: "ann").lastMutationID == 4)
            #expect(try await store.forgetClients(idleSince: Date(timeIntervalSinceNow: 1)) == 1)
            #expect(try await store.read(key, lastMutationIDOf: ClientID(rawValue: "c"), scope: "ann").lastMutationID == nil)
            #expect(try await store.write { try $0.answer(to: "c:4", scope: "ann") } == nil)
        }
    }
}
