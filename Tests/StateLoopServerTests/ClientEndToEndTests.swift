import Foundation
import ServerTestApp
import StateLoopServer
import StateLoopSync
import StateLoopSyncTransports
import Synchronization
import TestSupport
import Testing

/// The kit's other half: StateLoopSync's resources and transports, unchanged, against it.
@Suite("Sync server: StateLoopSync clients", .timeLimit(.minutes(5)))
struct ClientEndToEndTests {
    struct AddNote: Mutation, Equatable {
        var text: String
        func apply(to value: inout [String]) { value.append(text) }
    }

    /// An optimistic notes resource of `user` over HTTP and WebSocket; `send` may wrap the
    /// real sender (to lose answers, say).
    static func notes(
        port: Int, user: String,
        send wrap:
            @escaping @Sendable (_ real: @escaping @Sendable (AddNote, MutationID) async throws -> Version, AddNote, MutationID) async throws ->
            Version = { try await $0($1, $2) }
    ) -> (RemoteResource<[String]>, OptimisticResource<AddNote>) {
        let client = ClientID()
        let headers = ["Authorization": "Bearer t-\(user)", "Client-ID": client.rawValue]
        let base = "127.0.0.1:\(port)/me/notes"
        let remote = RemoteResource(
            sources: ResourceSources(
                pull: HTTPPull<[String]>(url: URL(string: "http://\(base)")!, headers: headers),
                push: WebSocketPush<[String]>(url: "ws://\(base)/push", headers: headers, initialBackoff: .milliseconds(50))
            ))
        let sender = HTTPMutationSender<AddNote>(url: URL(string: "http://\(base)")!, headers: headers)
        let optimistic = OptimisticResource(
            resource: remote, clientID: client,
            send: { mutation, id in
                try await wrap(sender.callAsFunction, mutation, id)
            })
        return (remote, optimistic)
    }

    @Test("mutations, a server-side change and a lost answer: every note once, in order, on screen and on the server")
    func convergesWithoutDoubles() async throws {
        try await withNotesServer { server, client in
            _ = try await server.update { try $0.write(["start"], to: Notes.notes, "zoe") }
            let lost = Mutex(false)
            let (remote, notes) = Self.notes(port: client.port, user: "zoe") { real, mutation, id in
                let version = try await real(mutation, id)
                // The first answer to "lost" never arrives, though the server applied it.
                let loseIt =
                    mutation.text == "lost"
                    && lost.withLock { done in
                        defer { done = true }
                        return !done
                    }
                if loseIt { throw URLError(.networkConnectionLost) }
                return version
            }
            let shown = Mutex<[[String]]>([])
            let watcher = Task {
                for await status in notes.updates() {
                    if let value = status.value { shown.withLock { $0.append(value) } }
                }
            }
            #expect(await eventually(within: .seconds(10)) { notes.value == ["start"] })
            notes.mutate(AddNote(text: "a"))
            notes.mutate(AddNote(text: "lost"))
            _ = try await server.update { transaction in
                try transaction.write((try transaction.read(Notes.notes, "zoe") ?? []) + ["server"], to: Notes.notes, "zoe")
            }
            notes.mutate(AddNote(text: "b"))
            // The statuses stream does not replay: a settled resource is read through `value`.
            let settled = await eventually(within: .seconds(20)) {
                guard let truth = try? await client.send("GET", "me/notes", as: "zoe"),
                    let value = try? JSONDecoder().decode(Versioned<[String]>.self, from: truth.body)
                else { return false }
                return value.value.count == 5 && notes.value == value.value
            }
            #expect(settled, "shown: \(shown.withLock { $0.last ?? [] })")
            let final = try await client.send("GET", "me/notes", as: "zoe")
            let truth = try JSONDecoder().decode(Versioned<[String]>.self, from: final.body).value
            #expect(Set(truth) == ["start", "a", "lost", "server", "b"] && truth.count == 5)
            #expect(notes.value == truth)
            #expect(shown.withLock { $0 }.allSatisfy { $0.filter { $0 == "lost" }.count <= 1 })
            watcher.cancel()
            notes.stop()
            remote.stop()
        }
    }
}
