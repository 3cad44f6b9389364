import Foundation
import Hummingbird
import ServerTestApp
import StateLoopServer
import StateLoopServerTesting
import StateLoopSync
import StateLoopSyncTransports
import StateLoopTesting
import TestSupport
import Testing

/// `InProcessTransport`: an app's `SyncEndpoint` against the kit in the same process, pulls,
/// mutations and push sockets included, on a test clock.
@Suite struct InProcessTransportTests {
    /// A server of notes on a store that runs its transactions on the calling thread, and the
    /// transport to it on `clock`.
    private func server(clock: TestClock) throws -> (SyncServer<Notes.Rules>, InProcessTransport) {
        let server = SyncServer(store: try SQLiteStore(blocking: true), access: Notes.Rules())
        Notes.declare(on: server)
        let router = Router(context: SyncRequestContext.self)
        server.addRoutes(to: router)
        return (server, InProcessTransport(router: router, server: server, clock: clock))
    }

    /// No polling: whatever reaches a resource after its first pull came through its socket.
    private var pushOnly: ResourcePolicy {
        var policy = ResourcePolicy()
        policy.pollInterval = nil
        return policy
    }

    /// Advances `clock` a tick at a time until `condition` holds (bounded: a hang guard).
    private func advance(_ clock: TestClock, until condition: @escaping () -> Bool) async -> Bool {
        await eventually {
            if condition() { return true }
            await clock.advance(by: .milliseconds(100))
            return condition()
        }
    }

    @Test func aMutationOnOneDeviceIsPushedToAnother() async throws {
        let clock = TestClock()
        let (server, transport) = try server(clock: clock)
        try await server.update { try $0.write([], to: Notes.notes, "inproc-ann") }
        let address = URL(string: "http://notes.test")!
        let phone = SyncEndpoint(server: address, bearerToken: "t-inproc-ann", policy: pushOnly, clock: clock, transport: transport)
        let laptop = SyncEndpoint(server: address, bearerToken: "t-inproc-ann", policy: pushOnly, clock: clock, transport: transport)
        let notes = phone.optimisticResource(at: "/me/notes", for: AddNote.self)
        let shown = laptop.resource(at: "/me/notes", as: [String].self)
        // A screen on each device: a resource pulls while someone follows it.
        let screens = [Task { for await _ in notes.updates() {} }, Task { for await _ in shown.updates() {} }]
        defer {
            notes.stop()
            shown.stop()
            for screen in screens { screen.cancel() }
        }
        #expect(
            await advance(clock) { shown.status.value?.value == [] && server.openSockets == 2 },
            "both devices read the notes and opened their sockets")

        notes.mutate(AddNote(text: "milk"))
        #expect(await advance(clock) { shown.status.value?.value == ["milk"] }, "the laptop was pushed the phone's note: \(shown.status)")
        #expect(
            await advance(clock) { notes.status?.delivery == .idle && notes.status?.confirmed?.value == ["milk"] },
            "\(String(describing: notes.status))")
        #expect(!shown.status.isOffline, "the laptop's socket says it is online")

        // The socket ends with its resource.
        shown.stop()
        #expect(await advance(clock) { server.openSockets == 1 }, "the stopped resource's socket was closed: \(server.openSockets) open")
    }

    @Test func aRefusedSocketAndRequestSignTheAppOut() async throws {
        let clock = TestClock()
        let (server, transport) = try server(clock: clock)
        let stranger = SyncEndpoint(
            server: URL(string: "http://notes.test")!, bearerToken: "nobody", policy: pushOnly, clock: clock, transport: transport)
        let notes = stranger.resource(at: "/me/notes", as: [String].self)
        let screen = Task { for await _ in notes.updates() {} }
        defer {
            notes.stop()
            screen.cancel()
        }
        #expect(await advance(clock) { notes.status.isUnauthorized }, "\(String(describing: notes.status))")
        #expect(server.openSockets == 0)
        await #expect(throws: HTTPStatusError(status: 401)) { try await stranger.get("/me/notes", as: Versioned<[String]>.self) }
    }

    @Test func anAnswerOverTheLimitIsRefused() async throws {
        let clock = TestClock()
        let (server, transport) = try server(clock: clock)
        try await server.update { try $0.write(["a note longer than the limit"], to: Notes.notes, "inproc-bea") }
        let ann = SyncEndpoint(server: URL(string: "http://notes.test")!, bearerToken: "t-inproc-bea", maximumResponseBytes: 8, transport: transport)
        await #expect(throws: ResponseTooLargeError.self) { try await ann.get("/me/notes", as: Versioned<[String]>.self) }
    }
}

/// Adds a note, as the server's `POST /me/notes` does.
private struct AddNote: Mutation, Codable {
    typealias Value = [String]
    var text: String

    func apply(to value: inout [String]) {
        value.append(text)
    }
}
