import Foundation
import ServerTestApp
import StateLoopServer
import StateLoopServerTesting
import StateLoopWire
import Testing

@Suite("Sync server: access", .timeLimit(.minutes(5)))
struct AccessTests {
    @Test("no session: 401 with a JSON error, on reads and mutations")
    func unauthorized() async throws {
        try await withNotesServer { _, client in
            for (method, path) in [("GET", "me/notes"), ("POST", "me/notes"), ("GET", "board")] {
                let body = method == "POST" ? Data(#"{"text":"a"}"#.utf8) : nil
                let answer = try await client.send(method, path, as: nil, body: body, mutationID: "c:1")
                #expect(answer.status == 401, "\(method) \(path)")
                #expect(TestClient.errorCode(answer.body) == "unauthorized")
            }
            let refused = TestPushSocket(port: client.port, path: "me/notes/push", as: nil)
            await #expect(throws: (any Error).self) { try await refused.closeFrame() }
        }
    }

    @Test("a key the caller may not see answers exactly as one that does not exist: 404")
    func hiddenKeys() async throws {
        try await withNotesServer { server, client in
            _ = try await client.mutate("me/notes", as: "ann", Notes.NewNote(text: "secret"), id: "c:1")
            let missing = try await client.send("GET", "users/nobody/notes", as: "nobody2")
            let hidden = try await client.send("GET", "users/ann/notes", as: "bob")
            #expect(missing.status == 404)
            #expect(hidden.status == missing.status && hidden.body == missing.body)
            #expect(try await client.send("GET", "users/ann/notes", as: "ann").status == 200)
            #expect(try await client.send("HEAD", "users/ann/notes", as: "bob").status == 404)
            // eve may read nothing, not even the shared board.
            _ = try await server.update { try $0.write(1, to: Notes.board, "main") }
            #expect(try await client.send("GET", "board", as: "eve").status == 404)
            let refused = TestPushSocket(port: client.port, path: "users/ann/notes/push", as: "bob")
            await #expect(throws: (any Error).self) { try await refused.closeFrame() }
        }
    }

    @Test("a mutation that writes a key its principal may not write is refused (404) and writes nothing")
    func writeChecked() async throws {
        try await withNotesServer { _, client in
            _ = try await client.mutate("me/notes", as: "ann", Notes.NewNote(text: "mine"), id: "c:1")
            // The route's handler writes ann's notes, whatever the path says.
            let bob = try await client.mutate("users/bob/notes", as: "bob", Notes.NewNote(text: "overwritten"), id: "c:1")
            #expect(bob.status == 404)
            #expect(TestClient.errorCode(bob.body) == "notFound")
            let notes = try await client.send("GET", "me/notes", as: "ann")
            #expect(try JSONDecoder().decode(Versioned<[String]>.self, from: notes.body).value == ["mine"])
        }
    }
}
