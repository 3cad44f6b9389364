import Foundation
import StateLoopServer
import StateLoopServerTesting
import StateLoopWire
import TestSupport
import Testing

/// Mutations of rows: applied once per `Mutation-ID`, answered with the row's version, and
/// known to the reader's pushes and catch-ups by its `lastMutationID`.
@Suite("Collections: mutations of rows", .serialized, .timeLimit(.minutes(5)))
struct RowMutationTests {
    typealias Row = TaskBoard.TaskRow

    @Test(
        "a mutation writes its row once per id and is answered with the row's version; a deletion's answer is the deletion's version",
        arguments: StoreKind.enabled)
    func appliedOnce(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let server = try await TaskBoard.board(store: store)
            try await withRunning(server) { port in
                let client = TestClient(port: port)
                let task = Row(id: "t1", projectID: "p1", title: "write", position: 1)
                let first = try await client.mutate("/tasks", as: "ann", task, id: "phone:1")
                #expect(first.status == 200)
                #expect(try JSONDecoder().decode(MutationReceipt.self, from: first.body).version.counter == 1)
                let repeated = try await client.mutate("/tasks", as: "ann", task, id: "phone:1")
                #expect(repeated.status == 200 && repeated.body == first.body)
                #expect(try await server.read { try $0.row("t1", of: TaskBoard.tasks) } == task)
                let edited = try await client.mutate("/tasks", as: "ann", Row(id: "t1", projectID: "p1", title: "edit", position: 1), id: "phone:2")
                #expect(try JSONDecoder().decode(MutationReceipt.self, from: edited.body).version.counter == 2)
                let deleted = try await client.mutate("/tasks/delete", as: "ann", TaskBoard.Deletion(id: "t1"), id: "phone:3")
                #expect(deleted.status == 200)
                #expect(try JSONDecoder().decode(MutationReceipt.self, from: deleted.body).version.counter == 3)
                #expect(try await server.read { try $0.row("t1", of: TaskBoard.tasks) } == nil)
            }
        }
    }

    @Test("a refused mutation writes nothing and its refusal is remembered; the rows of a project one is not in cannot be written")
    func refused() async throws {
        let server = try await TaskBoard.board()
        try await withRunning(server) { port in
            let client = TestClient(port: port)
            let answer = try await client.mutate("/tasks", as: "bob", Row(id: "t1", projectID: "p1", title: "sneak", position: 1), id: "bob:1")
            #expect(answer.status == 404)
            #expect(try await server.read { try $0.row("t1", of: TaskBoard.tasks) } == nil)
            _ = try await client.mutate("/tasks", as: "ann", Row(id: "t2", projectID: "p1", title: "ann's", position: 1), id: "ann:1")
            // Moved into a project bob is in, from one he is not in: refused too.
            let moved = try await client.mutate("/tasks", as: "bob", Row(id: "t2", projectID: "p2", title: "taken", position: 1), id: "bob:2")
            #expect(moved.status == 404)
            #expect(try await server.read { try $0.row("t2", of: TaskBoard.tasks) }?.title == "ann's")
        }
    }

    /// The app's own mutation replayed over the transaction's rows: it sees the transaction's
    /// writes, and a row it cannot read is thrown, never taken as missing (the change would
    /// write over it).
    @Test("a change replayed on the server reads the transaction's rows, and throws a row it could not read rather than writing over it")
    func replayed() async throws {
        let server = try await TaskBoard.board()
        let task = Row(id: "t1", projectID: "p1", title: "kept", position: 1)
        let written = try await server.update { transaction in
            try transaction.write(task, to: TaskBoard.tasks)
            return try transaction.replay(Rename(id: "t1", title: "renamed"), on: TaskBoard.tasks)
        }
        #expect(written.count == 1 && written["t1"]??.title == "renamed")
        // The same rows read as a type they are not: the read fails, and so does the replay.
        await #expect(throws: DecodingError.self) {
            try await server.update { transaction in
                for (id, row) in try transaction.replay(Claim(id: "t1"), on: Self.claims) {
                    if let row { try transaction.write(row, to: Self.claims) } else { try transaction.delete(id, from: Self.claims) }
                }
            }
        }
        #expect(try await server.read { try $0.row("t1", of: TaskBoard.tasks) } == task)
    }

    private struct Rename: RowMutation {
        var id: String
        var title: String
        func apply(to rows: inout RowEdits<Row>) { rows[id]?.title = title }
    }

    /// The tasks' rows as another type, which they do not decode as.
    private struct Claimed: Codable, Sendable {
        var id: String
        var owner: String
    }

    private static let claims = RowCollection("tasks", of: Claimed.self) { $0.id }

    /// Takes the row if nobody holds it: writes over it when its read is taken as missing.
    private struct Claim: RowMutation {
        var id: String
        func apply(to rows: inout RowEdits<Claimed>) {
            if rows[id] == nil { rows[id] = Claimed(id: id, owner: "mallory") }
        }
    }

    @Test("the reader's differences, pushed or caught up, carry its lastMutationID with the rows its mutation wrote", arguments: StoreKind.enabled)
    func lastMutationID(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let server = try await TaskBoard.board(store: store)
            try await withRunning(server) { port in
                let client = TestClient(port: port)
                let socket = TestPushSocket(
                    port: port, path: "/tasks/byProject/push?projectID=p1", headers: ["Authorization": "Bearer t-ann", "Client-ID": "phone"])
                defer { socket.cancel() }
                #expect(await eventually { socket.received.count == 1 }, "no first answer")
                var ann = TaskBoard.Subscriber()
                try ann.apply(pushed: socket.received)
                _ = try await client.mutate("/tasks", as: "ann", Row(id: "t1", projectID: "p1", title: "mine", position: 1), id: "phone:7")
                #expect(await eventually { socket.received.count == 2 }, "no difference pushed")
                let pushed = try JSONDecoder().decode(RowsDifference<Row>.self, from: Data(socket.received[1].utf8))
                #expect(pushed.lastMutationID == 7 && pushed.rows.map(\.id) == ["t1"])
                let caughtUp = try await client.send("GET", "/tasks/byProject?projectID=p1&cookie=\(ann.cookie!)", as: "ann", clientID: "phone")
                let difference = try JSONDecoder().decode(RowsDifference<Row>.self, from: caughtUp.body)
                #expect(difference.lastMutationID == 7 && difference.rows.map(\.id) == ["t1"])
            }
        }
    }

    @Test(
        "a mutation that leaves a subscription's result as it was still tells its client's sockets on it (an empty difference), and no one else's",
        arguments: StoreKind.enabled)
    func emptyDifferenceForTheMutatingClient(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let server = try await TaskBoard.board(store: store)
            try await withRunning(server) { port in
                let client = TestClient(port: port)
                func socket(_ parameters: String, client: String) -> TestPushSocket {
                    TestPushSocket(
                        port: port, path: "/tasks/byProject/push?\(parameters)", headers: ["Authorization": "Bearer t-ann", "Client-ID": client])
                }
                // The phone follows p1 and p2; another device of ann's follows p2.
                let p1 = socket("projectID=p1", client: "phone")
                let p2 = socket("projectID=p2", client: "phone")
                let tablet = socket("projectID=p2", client: "tablet")
                defer { for socket in [p1, p2, tablet] { socket.cancel() } }
                #expect(await eventually { [p1, p2, tablet].allSatisfy { $0.received.count == 1 } }, "no first answers")
                _ = try await client.mutate("/tasks", as: "ann", Row(id: "t1", projectID: "p1", title: "mine", position: 1), id: "phone:3")
                #expect(await eventually { p1.received.count == 2 && p2.received.count == 2 }, "the phone's sockets were not both told")
                let onP2 = try JSONDecoder().decode(RowsDifference<Row>.self, from: Data(p2.received[1].utf8))
                #expect(!onP2.replace && onP2.rows.isEmpty && onP2.removed.isEmpty && onP2.lastMutationID == 3)
                // Resumable: the empty difference's cookie is a cookie like any.
                let resumed = try await client.send("GET", "/tasks/byProject?projectID=p2&cookie=\(onP2.cookie)", as: "ann", clientID: "phone")
                #expect(try JSONDecoder().decode(RowsDifference<Row>.self, from: resumed.body).replace == false)
                // A commit on p1 by someone else: the tablet hears nothing of p1, and nothing at all.
                try await server.update { try $0.write(Row(id: "t2", projectID: "p1", title: "server", position: 2), to: TaskBoard.tasks) }
                #expect(await eventually { p1.received.count == 3 }, "no difference for the server's write")
                #expect(p2.received.count == 2 && tablet.received.count == 1)
                // A mutation that writes nothing new (the row as it is): both sockets still learn it.
                _ = try await client.mutate("/tasks", as: "ann", Row(id: "t1", projectID: "p1", title: "mine", position: 1), id: "phone:4")
                #expect(await eventually { p1.received.count == 4 && p2.received.count == 3 }, "a mutation that changed nothing was not told")
                for socket in [p1, p2] {
                    let told = try JSONDecoder().decode(RowsDifference<Row>.self, from: Data(socket.received.last!.utf8))
                    #expect(told.rows.isEmpty && told.removed.isEmpty && told.lastMutationID == 4)
                }
                #expect(tablet.received.count == 1)
            }
        }
    }
}
