import Foundation
import Hummingbird
import StateLoopInspector
import StateLoopInspectorSyncServer
import StateLoopInspectorWire
import StateLoopServer
import StateLoopServerTesting
import StateLoopWire
import TestSupport
import Testing

/// A server watched by an inspector: its half of the one timeline.
@Suite("Sync server: watched by an inspector", .timeLimit(.minutes(3)))
struct ServerWatchTests {
    /// A principal with a secret, as a real policy's might carry.
    struct Caller: Sendable {
        let user: String
        let token: String
    }

    /// The test apps' tokens (`t-<user>`), with the token kept in the principal.
    struct Rules: AccessPolicy {
        func principal(for request: Request) async throws -> Caller? {
            guard let token = request.bearerToken, token.hasPrefix("t-") else { return nil }
            return Caller(user: String(token.dropFirst(2)), token: token)
        }
        func id(of caller: Caller) -> String { caller.user }
        func mayRead(_ key: ResourceKey, as caller: Caller) -> Bool { key.id == caller.user }
        func mayWrite(_ key: ResourceKey, as caller: Caller) -> Bool { key.id == caller.user }
    }

    struct NewNote: Codable, Sendable {
        var text: String
        var token: String? = nil
    }

    static let notes = ServerResource("notes", of: [String].self)

    static func server() throws -> SyncServer<Rules> {
        let server = SyncServer(store: try SQLiteStore(), access: Rules())
        server.serve(notes, at: "me/notes") { caller, _ in caller.user }
        server.mutation(at: "me/notes", body: NewNote.self, changes: notes, key: { caller, _ in caller.user }) { transaction, caller, note in
            guard !note.text.isEmpty else { throw MutationRefusal("emptyNote", "a note needs some text") }
            try transaction.write((try transaction.read(notes, caller.user) ?? []) + [note.text], to: notes, caller.user)
        }
        return server
    }

    @Test(
        "requests with their principal redacted, each mutation's outcome, the commit, the fan-out to the socket, the socket and the session that ended"
    )
    func recordsWhatTheServerDid() async throws {
        let server = try Self.server()
        let inspector = Inspector(app: "server", redacting: ["token"])
        inspector.watch(server, named: "kit")
        try await withRunning(server) { port in
            let client = TestClient(port: port)
            let socket = TestPushSocket(port: port, path: "/me/notes/push", as: "ann", clientID: "phone")
            defer { socket.cancel() }
            let opened = await eventually(within: .seconds(20)) { inspector.session().records.contains { $0.kind == .socket } }
            #expect(opened, "the socket's opening is recorded")
            let body = try JSONEncoder().encode(NewNote(text: "milk", token: "t-ann"))
            #expect(try await client.send("POST", "me/notes", as: "ann", body: body, mutationID: "phone:1", clientID: "phone").status == 200)
            #expect(try await client.send("POST", "me/notes", as: "ann", body: body, mutationID: "phone:1", clientID: "phone").status == 200)
            let empty = try JSONEncoder().encode(NewNote(text: ""))
            #expect(try await client.send("POST", "me/notes", as: "ann", body: empty, mutationID: "phone:2").status == 409)
            #expect(try await client.send("GET", "me/notes", as: "ann").status == 200)
            #expect(await eventually(within: .seconds(20)) { socket.values([String].self).last?.value == ["milk"] })
            server.closeSockets(of: "ann")
            let closed = await eventually(within: .seconds(20)) {
                inspector.session().records.contains { $0.kind == .socket && $0.outcome == "closed" }
            }
            #expect(closed, "the socket's end is recorded")
        }
        let records = inspector.session().records
        #expect(Set(records.map(\.system)) == ["kit"])
        let v1 = Version(epoch: server.epoch, counter: 1).description

        let requests = records.filter { $0.kind == .request }
        let first = try #require(requests.first { $0.mutation == "phone:1" })
        #expect(first.route == "POST /me/notes")
        #expect(first.httpStatus == 200)
        #expect(first.principalID == "ann")
        #expect(first.principal == .object(["user": .string("ann"), "token": .string(Redaction.placeholder)]))
        #expect(first.client == "phone")
        #expect(first.key == "notes/ann" && first.version == v1)
        #expect((first.duration ?? -1) >= 0)
        let read = try #require(requests.first { $0.route == "GET /me/notes" })
        #expect(read.key == "notes/ann" && read.version == v1 && read.mutation == nil)
        #expect(!String(decoding: try JSONEncoder().encode(records), as: UTF8.self).contains("t-ann"), "the token never leaves")

        let mutations = records.filter { $0.kind == .mutation }
        #expect(mutations.map(\.outcome) == ["applied", "repeated", "refused"])
        #expect(mutations.map(\.mutation) == ["phone:1", "phone:1", "phone:2"])
        #expect(mutations[0].version == v1 && mutations[1].version == v1 && mutations[0].httpStatus == 200)
        #expect(mutations[2].httpStatus == 409 && mutations[2].reason?.hasPrefix("emptyNote:") == true)
        // What the client sent: the path and the body, its secret redacted.
        #expect(mutations[0].route == "POST /me/notes")
        #expect(mutations[0].event == .object(["text": .string("milk"), "token": .string(Redaction.placeholder)]))
        #expect(mutations[2].event == .object(["text": .string("")]))

        let commits = records.filter { $0.kind == .commit }
        let commit = try #require(commits.first { $0.mutation == "phone:1" })
        #expect(commit.changes == [InspectorRecord.Change(key: "notes/ann", version: v1)])
        #expect(commit.principalID == "ann")

        let socketOpened = try #require(records.first { $0.kind == .socket && $0.outcome == "opened" })
        #expect(socketOpened.key == "notes/ann" && socketOpened.principalID == "ann" && socketOpened.client == "phone")
        let push = try #require(records.first { $0.kind == .push && $0.pushes?.contains { $0.version == v1 } == true })
        #expect(push.pushes == [InspectorRecord.Push(key: "notes/ann", version: v1, queued: [socketOpened.socket ?? -1])])

        let session = try #require(records.first { $0.kind == .session })
        #expect(session.principalID == "ann")
        let socketClosed = try #require(records.first { $0.kind == .socket && $0.outcome == "closed" })
        #expect(socketClosed.socket == socketOpened.socket && socketClosed.reason == "closed by the server")

        // In the order it happened: the mutation decided, committed, pushed; the request answered.
        func sequence(_ record: InspectorRecord) -> UInt64 { record.sequence }
        #expect(sequence(mutations[0]) < sequence(commit) && sequence(commit) < sequence(push) && sequence(push) < sequence(first))
        #expect(sequence(session) < sequence(socketClosed))
    }

    @Test("an unwatched server builds no report; the watch ends with its inspector and holds neither")
    func watchLifetime() async throws {
        let server = try Self.server()
        #expect(!server.activity.isWatched)
        var inspector: Inspector? = Inspector(app: "server")
        inspector?.watch(server)
        #expect(server.activity.isWatched)
        weak let released = inspector
        inspector = nil
        #expect(released == nil, "the watch does not hold the inspector")
        #expect(await eventually(within: .seconds(20)) { !server.activity.isWatched }, "the watch ends with its inspector")
    }
}
