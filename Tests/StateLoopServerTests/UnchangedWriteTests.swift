import Foundation
import ServerTestApp
import StateLoopServer
import StateLoopServerTesting
import StateLoopSync
import StateLoopSyncTransports
import StateLoopWire
import TestSupport
import Testing

/// A write whose value did not change is skipped: no version, no feed entry, no push; the
/// mutation behind it is acknowledged as any other. Run against both stores.
@Suite("Sync server: unchanged writes", .timeLimit(.minutes(5)))
struct UnchangedWriteTests {
    static let scores = ServerResource("scores", of: [String: Int].self)
    static let maybe = ServerResource("maybe", of: Int?.self)

    @Test(
        "a mutation that changes nothing: answered with the current version, remembered, the client's lastMutationID moved on; no version, no feed entry, no push",
        arguments: StoreKind.enabled)
    func unchangedMutation(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await withNotesServer(store: store) { _, client in
                let first = try await client.mutate("board", as: "ann", Notes.BoardChange(add: 5), id: "c1:1")
                #expect(try Self.receipt(first).counter == 1)
                let reader = TestPushSocket(port: client.port, path: "board/push", as: "ann", clientID: "c1")
                defer { reader.cancel() }
                #expect(await eventually(within: .seconds(10)) { reader.values(Int.self).count == 1 }, "\(reader.received)")

                let same = try await client.mutate("board", as: "ann", Notes.BoardChange(add: 0), id: "c1:2")
                #expect(same.status == 200)
                #expect(try Self.receipt(same) == Version(epoch: store.epoch, counter: 1))
                let retry = try await client.mutate("board", as: "ann", Notes.BoardChange(add: 0), id: "c1:2")
                #expect(retry.status == 200 && retry.body == same.body)
                // The value read names the mutation as processed, so a client drops it.
                let read = try await client.send("GET", "board", as: "ann", clientID: "c1")
                let value = try JSONDecoder().decode(Versioned<Int>.self, from: read.body)
                #expect(value == Versioned(5, version: Version(epoch: store.epoch, counter: 1), lastMutationID: 2))

                let next = try await client.mutate("board", as: "ann", Notes.BoardChange(add: 1), id: "c1:3")
                #expect(try Self.receipt(next).counter == 2)
                #expect(await eventually(within: .seconds(10)) { reader.values(Int.self).count >= 2 }, "\(reader.received)")
                // The unchanged write pushed nothing: the socket got the first value, then the next.
                let pushed = reader.values(Int.self)
                #expect(pushed.map(\.version.counter) == [1, 2] && pushed.map(\.value) == [5, 6])
                #expect(pushed.last?.lastMutationID == 3)
                let feed = try await store.changes(after: 0, limit: 100).filter { $0.value.key.resource == "board" }
                #expect(feed.map(\.value.version.counter) == [1, 2])
            }
        }
    }

    @Test("a key set to another value and back within one transaction is no change", arguments: StoreKind.enabled)
    func setAndSetBack(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            let server = SyncServer(store: store, access: Notes.Rules())
            try await server.update { try $0.write(["a": 1], to: Self.scores, "all") }
            try await server.update { transaction in
                try transaction.write(["a": 2], to: Self.scores, "all")
                try transaction.write(["a": 1], to: Self.scores, "all")
                // A key that does change beside it is written.
                try transaction.write(3, to: Notes.board, "main")
            }
            let stored = try await store.read(Self.scores.key("all"), lastMutationIDOf: nil, scope: "")
            #expect(stored.value?.version.counter == 1)
            #expect(try await store.read(Notes.board.key("main"), lastMutationIDOf: nil, scope: "").value?.version.counter == 1)
            let feed = try await store.changes(after: 0, limit: 100)
            #expect(feed.map(\.value.key) == [Self.scores.key("all"), Notes.board.key("main")])
        }
    }

    @Test("equal values make equal bytes, whatever order a dictionary holds its keys in: no change", arguments: StoreKind.enabled)
    func equalValuesEqualBytes(_ kind: StoreKind) async throws {
        // Equal dictionaries whose keys iterate in different orders (their capacities differ).
        let keys = (0..<40).map { "k\($0)" }
        var small: [String: Int] = [:]
        for key in keys { small[key] = 1 }
        var large = [String: Int](minimumCapacity: 4_096)
        for key in keys.reversed() { large[key] = 1 }
        #expect(small == large && Array(small.keys) != Array(large.keys), "the test needs two iteration orders")
        try await kind.withStore { [small, large] store in
            let server = SyncServer(store: store, access: Notes.Rules())
            try await server.update { try $0.write(small, to: Self.scores, "all") }
            try await server.update { try $0.write(large, to: Self.scores, "all") }
            let stored = try await store.read(Self.scores.key("all"), lastMutationIDOf: nil, scope: "")
            #expect(stored.value?.version.counter == 1)
            #expect(try await store.changes(after: 0, limit: 100).count == 1)
        }
    }

    @Test("a key written for the first time is written, even as null; then null again is no change", arguments: StoreKind.enabled)
    func firstWriteAlwaysWritten(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            let server = SyncServer(store: store, access: Notes.Rules())
            let key = Self.maybe.key("a")
            try await server.update { try $0.write(nil, to: Self.maybe, "a") }
            let created = try await store.read(key, lastMutationIDOf: nil, scope: "")
            #expect(created.value.map { String(decoding: $0.json, as: UTF8.self) } == "null")
            #expect(created.value?.version.counter == 1)
            try await server.update { try $0.write(nil, to: Self.maybe, "a") }
            try await server.update { try $0.write(7, to: Self.maybe, "a") }
            #expect(try await store.read(key, lastMutationIDOf: nil, scope: "").value?.version.counter == 2)
            #expect(try await store.changes(after: 0, limit: 100).map { String(decoding: $0.value.json, as: UTF8.self) } == ["null", "7"])
        }
    }

    @Test("a StateLoopSync client's mutation that changes nothing leaves its queue, its value unchanged")
    func clientQueueDrains() async throws {
        struct Add: Mutation, Equatable {
            var add: Int
            func apply(to value: inout Int) { value += add }
        }
        try await withNotesServer { server, client in
            _ = try await server.update { try $0.write(5, to: Notes.board, "main") }
            let clientID = ClientID()
            let headers = ["Authorization": "Bearer t-ann", "Client-ID": clientID.rawValue]
            let base = "127.0.0.1:\(client.port)/board"
            let remote = RemoteResource(
                sources: ResourceSources(
                    pull: HTTPPull<Int>(url: URL(string: "http://\(base)")!, headers: headers),
                    push: WebSocketPush<Int>(url: "ws://\(base)/push", headers: headers, initialBackoff: .milliseconds(50))
                ))
            let sender = HTTPMutationSender<Add>(url: URL(string: "http://\(base)")!, headers: headers)
            let board = OptimisticResource(resource: remote, clientID: clientID, send: { try await sender($0, $1) })
            defer {
                board.stop()
                remote.stop()
            }
            #expect(await eventually(within: .seconds(10)) { board.value == 5 })
            _ = board.mutate(Add(add: 0))
            let processed = await eventually(within: .seconds(10)) {
                let read = try? await client.send("GET", "board", as: "ann", clientID: clientID.rawValue)
                return read.flatMap { try? JSONDecoder().decode(Versioned<Int>.self, from: $0.body) }?.lastMutationID == 1
            }
            #expect(processed, "the server never processed the mutation")
            #expect(
                await eventually(within: .seconds(10)) { board.status?.mutations.isEmpty == true }, "\(String(describing: board.status?.mutations))")
            #expect(board.value == 5 && board.status?.confirmed?.version.counter == 1)
        }
    }

    private static func receipt(_ answer: (status: Int, body: Data)) throws -> Version {
        try JSONDecoder().decode(MutationReceipt.self, from: answer.body).version
    }
}
