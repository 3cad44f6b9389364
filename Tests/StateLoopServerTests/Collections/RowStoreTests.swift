import Foundation
import StateLoopServer
import StateLoopWire
import TestSupport
import Testing

/// The SQLite store's rows: versions, the change feed, and queries evaluated in SQL exactly as
/// `RowQuery` evaluates them in Swift.
@Suite("Collections: the stores' rows", .serialized, .timeLimit(.minutes(5)))
struct RowStoreTests {
    /// A row with one field of any kind.
    struct Probe: Codable, Sendable {
        var id: String
        var v: FieldValue
    }

    /// A row's JSON as the kit writes it, keys sorted: equal rows make equal bytes.
    static func encoded(_ row: Probe) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return try encoder.encode(row)
    }

    static let probes = RowCollection("probes", of: Probe.self) { $0.id }.field("v") { $0.v }

    /// Values of every kind, the edges of their order included: numbers of both kinds that are
    /// equal, text that Swift's `String` orders or equates otherwise than by bytes, and reals
    /// that are not finite (null to both: JSON has no such number).
    static let values: [FieldValue] = [
        .null, .real(.nan), .real(.infinity), .real(-.infinity), .integer(-3), .integer(0), .integer(2), .real(2.0), .real(-0.5), .real(2.5),
        .integer(1_000_000_000_000), .bool(true),
        .bool(false), .text(""), .text("a"), .text("B"), .text("b"), .text("10"), .text("9"), .text("\u{E9}"), .text("e\u{301}"),
        .text("\u{1F600}"), .text("\u{FF41}"), .text("z"),
    ]

    @Test("the store sorts and filters rows as RowQuery.matches and precedes do, for values of every kind", arguments: StoreKind.enabled)
    func sqlAgreesWithSwift(kind: StoreKind) async throws {
        try await kind.withStore { store in
            var random = SplitMix64(seed: 7)
            let rows = (Self.values + Self.values.shuffled(using: &random)).enumerated().map { index, value in
                Probe(id: String(format: "r%03d", index), v: value)
            }
            _ = try await store.write { transaction in
                for row in rows {
                    _ = try transaction.writeRow(try Self.encoded(row), fields: Self.probes.fields(of: row), to: Self.probes.key(row.id))
                }
            }
            let fields = Dictionary(uniqueKeysWithValues: rows.map { ($0.id, Self.probes.fields(of: $0)) })
            func stored(_ query: RowQuery) async throws -> [String] {
                try await store.read { try $0.rows(of: "probes", matching: query).map(\.key.id) }
            }
            func evaluated(_ query: RowQuery) -> [String] {
                let selected = rows.map(\.id).filter { query.matches(fields[$0]!) }
                return Array(selected.sorted { query.precedes(($0, fields[$0]!), ($1, fields[$1]!)) }.prefix(query.limit ?? .max))
            }
            for descending in [false, true] {
                let query = RowQuery(orderedBy: [.init("v", descending: descending)])
                #expect(try await stored(query) == evaluated(query), "order, descending: \(descending)")
            }
            for bound in Self.values {
                let tests: [RowCondition.Test] = [.equals(bound), .atLeast(bound), .above(bound), .atMost(bound), .below(bound)]
                for test in tests {
                    let query = RowQuery(where: [.init("v", test)], orderedBy: [.init("v")], limit: 7)
                    #expect(try await stored(query) == evaluated(query), "\(test)")
                }
            }
            for _ in 0..<50 {
                let wanted = Array(Self.values.shuffled(using: &random).prefix(Int.random(in: 0...4, using: &random)))
                let query = RowQuery(where: [.init("v", in: wanted)], orderedBy: [.init("v", descending: true)])
                #expect(try await stored(query) == evaluated(query), "in \(wanted)")
            }
        }
    }

    /// A first sync's pages: every row the conditions select, once, in the order of the ids'
    /// bytes (ids that Swift's `String` orders or equates otherwise included), read after any
    /// id, whatever the query's order and limit; the default read, built on the whole result,
    /// agrees.
    @Test("a query's result read page by page is every row it selects, once, in the order of the ids' bytes", arguments: StoreKind.enabled)
    func pagesInTheOrderOfIds(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let ids = ["", "B", "a", "b", "\u{E9}", "e\u{301}", "\u{1F600}", "\u{FF41}", "z", "10", "9", "a b", "a-c", "t00001", "t00002"]
            let rows = ids.enumerated().map { index, id in Probe(id: id, v: .integer(Int64(index % 4))) }
            _ = try await store.write { transaction in
                for row in rows {
                    _ = try transaction.writeRow(try Self.encoded(row), fields: Self.probes.fields(of: row), to: Self.probes.key(row.id))
                }
            }
            for query in [
                RowQuery(), RowQuery(where: [.init("v", .atLeast(.integer(2)))], orderedBy: [.init("v", descending: true)], limit: 2),
            ] {
                let expected = rows.filter { query.matches(Self.probes.fields(of: $0)) }.map(\.id).sorted {
                    $0.utf8.lexicographicallyPrecedes($1.utf8)
                }
                for size in [1, 2, 4, 100] {
                    var read: [String] = []
                    var after: String?
                    while true {
                        let page = try await store.read { [after] transaction in
                            try transaction.rows(of: "probes", matching: query, after: after, limit: size).map(\.key.id)
                        }
                        read += page
                        guard page.count == size, let last = page.last else { break }
                        after = last
                    }
                    #expect(read == expected, "pages of \(size): \(read.map(\.debugDescription))")
                }
                let byDefault = try await store.read { transaction in
                    try WholeReads(transaction).rows(of: "probes", matching: query, after: "a", limit: 100).map(\.key.id)
                }
                #expect(byDefault == Array(expected.drop { !"a".utf8.lexicographicallyPrecedes($0.utf8) }), "the default read")
            }
        }
    }

    @Test(
        "a row written again with the same bytes keeps its version and adds no feed entry; a deleted row made again goes on from its counter",
        arguments: StoreKind.enabled)
    func rowVersions(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let key = Self.probes.key("r")
            func write(_ value: FieldValue?) async throws -> Version? {
                try await store.write { transaction in
                    guard let value else { return try transaction.writeRow(nil, fields: [:], to: key) }
                    let row = Probe(id: "r", v: value)
                    return try transaction.writeRow(try Self.encoded(row), fields: Self.probes.fields(of: row), to: key)
                }
            }
            #expect(try await write(nil) == nil, "deleting a row that never was changes nothing")
            #expect(try await write(.integer(1))?.counter == 1)
            let bounds = try await store.read { try $0.rowFeedBounds() }
            #expect(try await write(.integer(1)) == nil)
            #expect(try await store.read { try $0.rowFeedBounds() } == bounds)
            #expect(try await write(.integer(2))?.counter == 2)
            #expect(try await write(nil)?.counter == 3)
            #expect(try await write(nil) == nil)
            #expect(try await store.read { try $0.row(of: key) } == nil)
            #expect(try await write(.integer(4))?.counter == 4)
            // The same bytes with fields declared since: written, so that the fields are filled in.
            let row = Probe(id: "r", v: .integer(4))
            let refilled = try await store.write { transaction in
                try transaction.writeRow(try Self.encoded(row), fields: ["v": .integer(4), "w": .text("new")], to: key)
            }
            #expect(refilled?.counter == 5)
            let changes = try await store.read { try $0.rowChanges(of: "probes", after: 0, limit: 100) }
            #expect(changes.map(\.version.counter) == [1, 2, 3, 4, 5])
            #expect(changes.map(\.before) == [nil, ["v": .integer(1)], ["v": .integer(2)], nil, ["v": .integer(4)]])
            #expect(
                changes.map(\.after) == [["v": .integer(1)], ["v": .integer(2)], nil, ["v": .integer(4)], ["v": .integer(4), "w": .text("new")]])
            #expect(changes[2].json == nil)
        }
    }

    @Test("rows' entries share the feed's positions but not its values: changes(after:) lists values alone", arguments: StoreKind.enabled)
    func valueFeedLeavesRowsOut(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let note = ResourceKey(resource: "notes", id: "ann")
            _ = try await store.write { transaction in
                _ = try transaction.write(Data(#""one""#.utf8), to: note)
                _ = try transaction.writeRow(Data(#"{"id":"r","v":1}"#.utf8), fields: ["v": .integer(1)], to: Self.probes.key("r"))
                _ = try transaction.write(Data(#""two""#.utf8), to: ResourceKey(resource: "notes", id: "bob"))
            }
            let values = try await store.changes(after: 0, limit: 10)
            #expect(values.map(\.value.key.id) == ["ann", "bob"])
            #expect(values.map(\.sequence) == [1, 3])
            #expect(try await store.read { try $0.rowFeedBounds().newest } == 3)
        }
    }

    @Test(
        "from any cookie of a random history, the catch-up applied to what was held then is the whole result now",
        arguments: StoreKind.enabled, [1, 2, 3] as [UInt64])
    func resumeFromAnyCookie(kind: StoreKind, seed: UInt64) async throws {
        try await kind.withStore { store in try await resume(on: store, seed: seed) }
    }

    private func resume(on store: any ServerStore, seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        let server = TaskBoard.server(store: store)
        try await server.update { transaction in
            try transaction.write(["ann"], to: TaskBoard.members, "p1")
            try transaction.write(["ann"], to: TaskBoard.members, "p2")
        }
        try await withRunning(server) { port in
            let client = TestClient(port: port)
            // What a subscriber held at each cookie it was answered with.
            var held: [TaskBoard.Subscriber] = []
            var current = TaskBoard.Subscriber()
            for _ in 0..<40 {
                // A row written (or, `nil`, deleted) per id, in one commit.
                var writes: [(id: String, row: TaskBoard.TaskRow?)] = []
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    let id = "t\(Int.random(in: 0..<10, using: &random))"
                    let deleted = Int.random(in: 0..<5, using: &random) == 0
                    let row = TaskBoard.TaskRow(
                        id: id, projectID: ["p1", "p2"].randomElement(using: &random)!, title: "\(Int.random(in: 0..<3, using: &random))",
                        position: Int.random(in: 0..<4, using: &random), done: Bool.random(using: &random),
                        hidden: Int.random(in: 0..<4, using: &random) == 0)
                    writes.append((id, deleted ? nil : row))
                }
                try await server.update { [writes] transaction in
                    for (id, row) in writes {
                        if let row { try transaction.write(row, to: TaskBoard.tasks) } else { try transaction.delete(id, from: TaskBoard.tasks) }
                    }
                }
                // Sometimes the subscriber catches up, sometimes it falls behind.
                if Bool.random(using: &random) {
                    _ = try await client.refresh(&current, ["projectID": "p1"])
                    held.append(current)
                }
            }
            var whole = TaskBoard.Subscriber()
            _ = try await client.refresh(&whole, ["projectID": "p1"])
            #expect(held.count > 5 && held.contains { !$0.rows.isEmpty }, "a history that tries little")
            for (index, var subscriber) in held.enumerated() {
                let difference = try await client.refresh(&subscriber, ["projectID": "p1"])
                #expect(!difference.replace)
                #expect(subscriber.rows == whole.rows, "resumed from the cookie of answer \(index) (seed \(seed))")
                #expect(subscriber.rows.values.allSatisfy { !$0.value.hidden && $0.value.projectID == "p1" })
            }
        }
    }
}

/// A store transaction that reads pages the default way (through the whole result).
private final class WholeReads: ForwardingTransaction {}
