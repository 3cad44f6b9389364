import Foundation
import Hummingbird
import ServerTestApp
import StateLoopServer
import StateLoopServerTesting
import StateLoopWire
import Testing

/// `InProcessHTTPClient`: the kit's routes answered through the router in the test's task, as
/// over a socket, on a store that runs its transactions on the calling thread.
@Suite struct InProcessHTTPClientTests {
    @Test func answersAsTheServerDoes() async throws {
        let server = SyncServer(store: try SQLiteStore(blocking: true), access: Notes.Rules())
        Notes.declare(on: server)
        let router = Router(context: SyncRequestContext.self)
        server.addRoutes(to: router)
        let client = InProcessHTTPClient(router: router, headers: ["Authorization": "Bearer t-ann"])

        let applied = try await client.send("POST", "me/notes", json: Notes.NewNote(text: "hi"), mutationID: "c1:1", clientID: "c1")
        #expect(applied.status == 200, "\(applied.text)")
        let version = try applied.decode(MutationReceipt.self).version
        // The same id again: the remembered answer, not a second run.
        let repeated = try await client.send("POST", "me/notes", json: Notes.NewNote(text: "hi"), mutationID: "c1:1", clientID: "c1")
        #expect(try repeated.decode(MutationReceipt.self).version == version)

        let read = try await client.send("GET", "/me/notes", headers: ["Client-ID": "c1"])
        let notes = try read.decode(Versioned<[String]>.self)
        #expect(notes.value == ["hi"] && notes.version == version && notes.lastMutationID == 1)

        // Refusals come with their status and the kit's error body.
        let anonymous = try await client.send("GET", "/me/notes", headers: ["Authorization": ""])
        #expect(anonymous.status == 401 && anonymous.errorBody != nil, "\(anonymous.text)")
        let empty = try await client.send("POST", "me/notes", json: Notes.NewNote(text: ""), mutationID: "c1:2")
        #expect(empty.status == 409 && empty.errorBody?.error == "emptyNote", "\(empty.text)")
        let nowhere = try await client.send("GET", "/no/such/route")
        #expect(nowhere.status == 404 && nowhere.errorBody != nil, "\(nowhere.text)")
    }
}
