import Foundation
import Hummingbird
import NIOCore
import ServerTestApp
import StateLoopServer
import StateLoopSync
import StateLoopSyncTransports
import TestSupport
import Testing

/// The client's one call per resource (`SyncEndpoint`) against the kit: what it wires is what
/// the kit serves, pull, push, `Client-ID` and mutations, with nothing written by hand.
@Suite("Sync endpoint: a resource in one call", .timeLimit(.minutes(5)))
struct SyncEndpointTests {
    struct AddNote: Mutation, Equatable {
        var text: String
        func apply(to value: inout [String]) { value.append(text) }
    }

    static func endpoint(port: Int, user: String) -> SyncEndpoint {
        SyncEndpoint(server: URL(string: "http://127.0.0.1:\(port)")!, bearerToken: "t-\(user)", reconnectBackoff: .milliseconds(50))
    }

    @Test(
        "an optimistic resource from one call: shown at once, sent once, confirmed with its own mutation id; a server-side change is pushed; stop closes its socket"
    )
    func optimisticResourceInOneCall() async throws {
        try await withNotesServer { server, client in
            _ = try await server.update { try $0.write(["start"], to: Notes.notes, "endo") }
            let notes = Self.endpoint(port: client.port, user: "endo").optimisticResource(at: "/me/notes", for: AddNote.self)
            #expect(await eventually(within: .seconds(10)) { notes.value == ["start"] }, "no first value")
            #expect(await eventually(within: .seconds(10)) { server.openSockets == 1 }, "no push socket")
            let id = notes.mutate(AddNote(text: "a"))
            #expect(notes.value == ["start", "a"], "not shown at once")
            // Confirmed: the server's value names this resource's client and the mutation's number.
            let confirmed = await eventually(within: .seconds(10)) {
                notes.status?.confirmed?.value == ["start", "a"] && notes.status?.mutations.isEmpty == true
            }
            #expect(confirmed, "\(String(describing: notes.status?.confirmed)) \(String(describing: notes.status?.mutations.count))")
            #expect(id.parts?.client == notes.clientID)
            // Another writer's change reaches it by push.
            _ = try await server.update { transaction in
                try transaction.write((try transaction.read(Notes.notes, "endo") ?? []) + ["server"], to: Notes.notes, "endo")
            }
            #expect(await eventually(within: .seconds(10)) { notes.value == ["start", "a", "server"] }, "the push did not arrive")
            #expect(Notes.runs.withLock { $0["endo"] } == 1, "applied \(Notes.runs.withLock { $0["endo"] ?? 0 }) times")
            // Stopping the optimistic resource stops the resource under it: its socket closes.
            notes.stop()
            #expect(await eventually(within: .seconds(10)) { server.openSockets == 0 }, "the push socket stayed open")
        }
    }

    /// An app route of its own: echoes the body's text with the caller's token, sorted keys.
    struct Echo: Codable, Equatable {
        var text: String
        var authorization: String?
    }

    @Test("a read-only resource follows pushes; the app's own GET and POST carry the session; a link off the server is refused")
    func resourceAndRequests() async throws {
        let server = SyncServer(store: try SQLiteStore(), access: Notes.Rules())
        Notes.declare(on: server)
        try await withRunning(
            server,
            routes: { router in
                router.post("echo") { request, _ -> Response in
                    var request = request
                    let body = try await request.collectBody(upTo: 1_000)
                    var echo = try JSONDecoder().decode(Echo.self, from: Data(buffer: body))
                    echo.authorization = request.headers[.authorization]
                    return Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(bytes: try JSONEncoder().encode(echo))))
                }
            }
        ) { port in
            _ = try await server.update { try $0.write(1, to: Notes.board, "main") }
            let client = TestClient(port: port)
            let endpoint = Self.endpoint(port: client.port, user: "ann")
            let board = endpoint.resource(at: "/board", as: Int.self)
            defer { board.stop() }
            #expect(await eventually(within: .seconds(10)) { board.status.value?.value == 1 })
            _ = try await server.update { try $0.write(2, to: Notes.board, "main") }
            #expect(await eventually(within: .seconds(10)) { board.status.value?.value == 2 }, "the push did not arrive")
            // The app's own requests: the session's token rides along.
            let read = try await endpoint.get("/board", as: Versioned<Int>.self)
            #expect(read.value == 2)
            let echo = try await endpoint.post("/echo", Echo(text: "hi"), as: Echo.self)
            #expect(echo == Echo(text: "hi", authorization: "Bearer t-ann"))
            await #expect(throws: HTTPStatusError.self) {
                try await Self.endpoint(port: client.port, user: "eve").get("/board", as: Versioned<Int>.self)
            }
            // Links the server sends are followed on this server only.
            #expect(try endpoint.link("/board?x=1").absoluteString == "http://127.0.0.1:\(client.port)/board?x=1")
            #expect(throws: ForeignLinkError(link: "http://127.0.0.2:\(client.port)/board")) {
                try endpoint.link("http://127.0.0.2:\(client.port)/board")
            }
            #expect(throws: ForeignLinkError(link: "http://a b/")) { try endpoint.link("http://a b/") }
        }
    }

    @Test("addresses: paths join the server's own path; push addresses use ws or wss")
    func addresses() {
        let plain = SyncEndpoint(server: URL(string: "http://127.0.0.1:8080")!)
        #expect(plain.url("/me/ride").absoluteString == "http://127.0.0.1:8080/me/ride")
        #expect(plain.url("me/ride").absoluteString == "http://127.0.0.1:8080/me/ride")
        #expect(plain.pushURL("/me/ride/push") == "ws://127.0.0.1:8080/me/ride/push")
        let prefixed = SyncEndpoint(server: URL(string: "https://127.0.0.1:8443/api/")!, bearerToken: "abc")
        #expect(prefixed.url("/me/ride").absoluteString == "https://127.0.0.1:8443/api/me/ride")
        #expect(prefixed.pushURL("/me/ride/push") == "wss://127.0.0.1:8443/api/me/ride/push")
        #expect(prefixed.headers["Authorization"] == "Bearer abc")
    }
}
