import Foundation
import HTTPTypes
import ServerTestApp
import StateLoopServer
import StateLoopServerPostgres
import StateLoopServerTesting
import StateLoopWire
import Synchronization
import TestSupport
import Testing

/// Collections' push sockets: `GET <path>/<query>/push` sends the first answer, then the
/// difference of every commit that changes the result, and follows access as it changes.
@Suite("Collections: push sockets", .serialized, .timeLimit(.minutes(5)))
struct CollectionPushTests {
    typealias Row = TaskBoard.TaskRow

    private static func socket(_ port: Int, _ query: String, as user: String, _ parameters: String, cookie: String? = nil) -> TestPushSocket {
        TestPushSocket(
            port: port, path: "/tasks/\(query)/push?\(parameters)\(cookie.map { "&cookie=\($0)" } ?? "")",
            headers: ["Authorization": "Bearer t-\(user)"])
    }

    /// Waits until what `socket` received, applied, is the query's whole result as `GET`
    /// answers it now.
    private static func converges(
        _ socket: TestPushSocket, _ client: TestClient, query: String = "byProject", as user: String = "ann", _ parameters: [String: String]
    ) async throws -> Bool {
        var whole = TaskBoard.Subscriber()
        _ = try await client.refresh(&whole, parameters, query: query, as: user)
        return await eventually(within: .seconds(20)) {
            var pushed = TaskBoard.Subscriber()
            guard (try? pushed.apply(pushed: socket.received)) != nil else { return false }
            return pushed.rows == whole.rows
        }
    }

    @Test(
        "a socket gets the whole result, then each commit's difference, and nothing for a commit that does not change its result",
        arguments: StoreKind.enabled)
    func differences(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let server = try await TaskBoard.board(
                [
                    Row(id: "a", projectID: "p1", title: "A", position: 1), Row(id: "b", projectID: "p1", title: "B", position: 2),
                    Row(id: "c", projectID: "p2", title: "C", position: 3),
                ], store: store)
            try await withRunning(server) { port in
                let socket = Self.socket(port, "byProject", as: "ann", "projectID=p1")
                defer { socket.cancel() }
                #expect(await eventually { socket.received.count == 1 }, "no first answer")
                let first = try JSONDecoder().decode(RowsDifference<Row>.self, from: Data(socket.received[0].utf8))
                #expect(first.replace && first.rows.map(\.id) == ["a", "b"])
                try await server.update { transaction in
                    try transaction.write(Row(id: "a", projectID: "p1", title: "A2", position: 1), to: TaskBoard.tasks)
                    try transaction.write(Row(id: "b", projectID: "p2", title: "B", position: 2), to: TaskBoard.tasks)
                    try transaction.write(Row(id: "d", projectID: "p1", title: "D", position: 4), to: TaskBoard.tasks)
                }
                #expect(await eventually { socket.received.count == 2 }, "no difference pushed")
                let second = try JSONDecoder().decode(RowsDifference<Row>.self, from: Data(socket.received[1].utf8))
                #expect(!second.replace)
                #expect(Set(second.rows.map(\.id)) == ["a", "d"] && second.removed == ["b"])
                #expect(second.cookie != first.cookie)
                // A commit elsewhere says nothing to this socket; the next one here does.
                try await server.update { try $0.write(Row(id: "c", projectID: "p2", title: "C2", position: 3), to: TaskBoard.tasks) }
                try await server.update { try $0.delete("d", from: TaskBoard.tasks) }
                #expect(await eventually { socket.received.count == 3 }, "no difference for the deletion")
                let third = try JSONDecoder().decode(RowsDifference<Row>.self, from: Data(socket.received[2].utf8))
                #expect(third.rows.isEmpty && third.removed == ["d"])
                #expect(try await Self.converges(socket, TestClient(port: port), ["projectID": "p1"]))
                // The cookie a socket last got resumes a request, with nothing new since.
                let resumed = try await TestClient(port: port).query("byProject", as: "ann", ["projectID": "p1"], cookie: third.cookie)
                #expect(resumed.difference.map { !$0.replace && $0.rows.isEmpty && $0.removed.isEmpty } == true)
            }
        }
    }

    @Test("a socket opened with a cookie gets the difference since it, not the whole result")
    func openedFromCookie() async throws {
        let server = try await TaskBoard.board([Row(id: "a", projectID: "p1", title: "A", position: 1)])
        try await withRunning(server) { port in
            let client = TestClient(port: port)
            var ann = TaskBoard.Subscriber()
            _ = try await client.refresh(&ann, ["projectID": "p1"])
            try await server.update { try $0.write(Row(id: "e", projectID: "p1", title: "E", position: 5), to: TaskBoard.tasks) }
            let socket = Self.socket(port, "byProject", as: "ann", "projectID=p1", cookie: ann.cookie)
            defer { socket.cancel() }
            #expect(await eventually { !socket.received.isEmpty }, "no first answer")
            let first = try JSONDecoder().decode(RowsDifference<Row>.self, from: Data(socket.received[0].utf8))
            #expect(!first.replace && first.rows.map(\.id) == ["e"])
        }
    }

    @Test("removed from the project, a reader's socket is sent an empty result and closed, and never the commit's rows", arguments: StoreKind.enabled)
    func accessRevoked(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let server = try await TaskBoard.board([Row(id: "c", projectID: "p2", title: "C", position: 1)], store: store)
            try await withRunning(server) { port in
                let socket = Self.socket(port, "watched", as: "bob", "projectID=p2")
                defer { socket.cancel() }
                #expect(await eventually { socket.received.count == 1 }, "no first answer")
                try await server.update { transaction in
                    try transaction.write(["ann"], to: TaskBoard.members, "p2")
                    try transaction.write(Row(id: "c", projectID: "p2", title: "secret plans", position: 1), to: TaskBoard.tasks)
                }
                let close = try await socket.closeFrame(within: .seconds(20))
                #expect(close?.closeCode == .policyViolation)
                #expect(!socket.received.contains { $0.contains("secret plans") })
                let last = try JSONDecoder().decode(RowsDifference<Row>.self, from: Data(try #require(socket.received.last).utf8))
                #expect(last.replace && last.rows.isEmpty)
                // And a new socket is refused.
                let again = Self.socket(port, "watched", as: "bob", "projectID=p2")
                defer { again.cancel() }
                #expect(await eventually { again.ending != nil }, "bob's new socket was not refused")
                #expect(again.received.isEmpty)
            }
        }
    }

    @Test("a query made otherwise by a commit it depends on sends its new whole result", arguments: StoreKind.enabled)
    func queryMadeAgain(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let server = try await TaskBoard.board(
                [
                    Row(id: "a", projectID: "p1", title: "A", position: 1), Row(id: "x", projectID: "p3", title: "X", position: 2),
                ], store: store)
            try await withRunning(server) { port in
                let socket = Self.socket(port, "mine", as: "bob", "")
                defer { socket.cancel() }
                #expect(await eventually { socket.received.count == 1 }, "no first answer")
                try await server.update { try $0.write(["bob"], to: TaskBoard.members, "p3") }
                #expect(await eventually { socket.received.count == 2 }, "no new result")
                let second = try JSONDecoder().decode(RowsDifference<Row>.self, from: Data(socket.received[1].utf8))
                #expect(second.replace && second.rows.map(\.id) == ["x"])
                try await server.update { try $0.write(Row(id: "x", projectID: "p3", title: "X2", position: 2), to: TaskBoard.tasks) }
                #expect(try await Self.converges(socket, TestClient(port: port), query: "mine", as: "bob", [:]))
            }
        }
    }

    @Test("sockets opened while commits go on each end with the whole result: no commit falls between a first answer and the first difference")
    func openingBesideCommits() async throws {
        // Its first answer takes 20 ms to read, and commits are made meanwhile: a file's reads
        // run beside its writes (an in-memory store's wait for them).
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stateloop-rows-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = try SQLiteStore(path: folder.appendingPathComponent("server.sqlite").path, durability: .processCrash)
        let server = try await TaskBoard.board([], store: SlowFeedStore(file))
        try await withRunning(server) { port in
            let writing = Task {
                var random = SplitMix64(seed: 11)
                // Each commit makes a new row, and now and then deletes an older one: a commit
                // a socket missed is not mended by a later one.
                for round in 0..<300 {
                    let project = Bool.random(using: &random) ? "p1" : "p2"
                    let deleted = round > 0 && Int.random(in: 0..<4, using: &random) == 0 ? "t\(Int.random(in: 0..<round, using: &random))" : nil
                    try await server.update { transaction in
                        try transaction.write(Row(id: "t\(round)", projectID: project, title: "\(round)", position: round % 5), to: TaskBoard.tasks)
                        if let deleted { try transaction.delete(deleted, from: TaskBoard.tasks) }
                    }
                }
            }
            var sockets: [TestPushSocket] = []
            for _ in 0..<8 {
                sockets.append(Self.socket(port, "byProject", as: "ann", "projectID=p1"))
                try await Task.sleep(for: .milliseconds(5))
            }
            defer { for socket in sockets { socket.cancel() } }
            try await writing.value
            for (index, socket) in sockets.enumerated() {
                #expect(try await Self.converges(socket, TestClient(port: port), ["projectID": "p1"]), "socket \(index)")
            }
        }
    }

    @Test("a query with a limit is sent its window again whole when a commit may shift it, and nothing when none can", arguments: StoreKind.enabled)
    func window(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let server = try await TaskBoard.board((1...5).map { Row(id: "t\($0)", projectID: "p1", title: "\($0)", position: $0) }, store: store)
            try await withRunning(server) { port in
                let socket = Self.socket(port, "firstOpen", as: "ann", "projectID=p1&count=2")
                defer { socket.cancel() }
                #expect(await eventually { socket.received.count == 1 }, "no first answer")
                var ann = TaskBoard.Subscriber()
                try ann.apply(pushed: socket.received)
                #expect(ann.rows.keys.sorted() == ["t1", "t2"])
                try await server.update { try $0.write(Row(id: "t1", projectID: "p1", title: "1", position: 1, done: true), to: TaskBoard.tasks) }
                #expect(await eventually { socket.received.count == 2 }, "the window did not move")
                try await server.update { try $0.write(Row(id: "x", projectID: "p2", title: "x", position: 0), to: TaskBoard.tasks) }
                try await server.update { try $0.write(Row(id: "t0", projectID: "p1", title: "0", position: 0), to: TaskBoard.tasks) }
                #expect(await eventually { socket.received.count == 3 }, "the window did not move")
                ann = TaskBoard.Subscriber()
                try ann.apply(pushed: socket.received)
                #expect(ann.rows.keys.sorted() == ["t0", "t2"])
                let last = try JSONDecoder().decode(RowsDifference<Row>.self, from: Data(socket.received[2].utf8))
                #expect(last.replace && last.rows.map(\.id) == ["t0", "t2"])
            }
        }
    }

    @Test("PostgreSQL: a commit on one instance reaches the query sockets of another, with the same difference")
    func acrossInstances() async throws {
        guard StoreKind.postgresTestsEnabled else { return }
        try await withPostgres { url in
            let (one, other) = (try await PostgresStore(url: url, deadline: hangGuard), try await PostgresStore(url: url, deadline: hangGuard))
            defer {
                one.close()
                other.close()
            }
            let writer = try await TaskBoard.board([Row(id: "a", projectID: "p1", title: "A", position: 1)], store: one)
            try await withRunning(TaskBoard.server(store: other)) { port in
                let socket = Self.socket(port, "byProject", as: "ann", "projectID=p1")
                defer { socket.cancel() }
                #expect(await eventually { socket.received.count == 1 }, "no first answer")
                try await writer.update { transaction in
                    try transaction.write(Row(id: "b", projectID: "p1", title: "B", position: 2), to: TaskBoard.tasks)
                    try transaction.delete("a", from: TaskBoard.tasks)
                }
                #expect(await eventually { socket.received.count == 2 }, "the other instance's commit did not arrive")
                let difference = try JSONDecoder().decode(RowsDifference<Row>.self, from: Data(socket.received[1].utf8))
                #expect(!difference.replace && difference.rows.map(\.id) == ["b"] && difference.removed == ["a"])
                #expect(try await Self.converges(socket, TestClient(port: port), ["projectID": "p1"]))
            }
        }
    }

    @Test("a difference the push faults drop reaches its reader as a hint, then the socket's close, and the reader catches up from its cookie")
    func droppedDifference() async throws {
        let server = try await TaskBoard.board([Row(id: "a", projectID: "p1", title: "A", position: 1)])
        server.pushFaults = DropAfterFirst()
        try await withRunning(server) { port in
            let client = TestClient(port: port)
            let socket = Self.socket(port, "byProject", as: "ann", "projectID=p1")
            defer { socket.cancel() }
            #expect(await eventually { socket.received.count == 1 }, "no first answer")
            var ann = TaskBoard.Subscriber()
            try ann.apply(pushed: socket.received)
            try await server.update { try $0.delete("a", from: TaskBoard.tasks) }
            #expect(await eventually { socket.received.count == 2 }, "nothing came for the lost difference")
            #expect(socket.received[1] == #"{"changed":true}"#)
            // The socket ends after the hint: a later difference would follow the lost one.
            let close = try await socket.closeFrame(within: .seconds(20))
            #expect(close?.closeCode == .normalClosure)
            let caughtUp = try await client.refresh(&ann, ["projectID": "p1"])
            #expect(!caughtUp.replace && caughtUp.removed == ["a"] && ann.rows.isEmpty)
        }
    }

    /// Lets each socket's first push through and drops the rest.
    private struct DropAfterFirst: PushFaults {
        func refusal(of key: ResourceKey) -> HTTPResponse.Status? { nil }
        func socket(following key: ResourceKey) -> any PushSocketFaults { Socket() }

        final class Socket: PushSocketFaults {
            let sent = Mutex(0)
            func fate(of version: Version) -> PushFate {
                sent.withLock { sent in
                    sent += 1
                    return sent == 1 ? .send : .drop
                }
            }
            var mayCut: Bool { false }
            func cut() async {}
        }
    }

    @Test("refused upgrades: no session 401, a refused query 404, a malformed cookie 400")
    func refusedUpgrades() async throws {
        let server = try await TaskBoard.board([])
        try await withRunning(server) { port in
            let sockets = [
                TestPushSocket(port: port, path: "/tasks/byProject/push?projectID=p1"),
                Self.socket(port, "byProject", as: "bob", "projectID=p1"),
                Self.socket(port, "byProject", as: "ann", "projectID=p1", cookie: "nonsense"),
            ]
            defer { for socket in sockets { socket.cancel() } }
            for socket in sockets {
                #expect(await eventually { socket.ending != nil }, "an upgrade that should be refused stayed open")
                #expect(socket.received.isEmpty)
            }
        }
    }
}
