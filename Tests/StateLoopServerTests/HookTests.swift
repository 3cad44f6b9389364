import Foundation
import HTTPTypes
import Hummingbird
import Logging
import ServerTestApp
import StateLoopServerTesting
import StateLoopWire
import Synchronization
import TestSupport
import Testing

@testable import StateLoopServer

/// What an app plugs into the kit: middleware in front of every route, routes of its own that
/// know the peer, the mutation id inside a handler, and (package-only) push faults.
@Suite("Sync server: the app's hooks", .timeLimit(.minutes(5)))
struct HookTests {
    @Test("middleware runs in front of the kit's routes and the app's; the app's routes know the peer; a handler knows its mutation id")
    func middlewareRoutesAndMutationID() async throws {
        let seen = MessageLog()
        let ids = MessageLog()
        let server = SyncServer(store: try SQLiteStore(), access: Notes.Rules(), logger: Self.quiet)
        Notes.declare(on: server)
        server.mutation(at: "me/tagged", body: Notes.NewNote.self, changes: Notes.notes, key: { user, _ in user }) { transaction, user, note in
            ids.append(transaction.mutationID?.rawValue ?? "none")
            try transaction.write([note.text], to: Notes.notes, user)
        }
        try await withRunning(
            server,
            middleware: { router in router.add(middleware: Recorder(seen: seen)) },
            routes: { router in router.get("whoami") { _, context in context.peer } }
        ) { port in
            let client = TestClient(port: port)
            #expect(try await client.mutate("me/tagged", as: "ann", Notes.NewNote(text: "a"), id: "c:1").status == 200)
            // The retry is answered from memory: the handler does not run again.
            #expect(try await client.mutate("me/tagged", as: "ann", Notes.NewNote(text: "a"), id: "c:1").status == 200)
            #expect(try await client.send("GET", "me/notes", as: "ann").status == 200)
            let (status, peer) = try await client.send("GET", "whoami", as: nil)
            #expect(status == 200 && String(decoding: peer, as: UTF8.self) == "127.0.0.1")
            #expect(try await client.send("GET", "nowhere", as: nil).status == 404)
            // The app's route is known to the 405 answer as the kit's are.
            #expect(try await client.send("POST", "whoami", as: nil).status == 405)
        }
        #expect(ids.all == ["c:1"])
        #expect(seen.all == ["POST /me/tagged", "POST /me/tagged", "GET /me/notes", "GET /whoami", "GET /nowhere", "POST /whoami"])
    }

    @Test("push faults: an upgrade refused, a push dropped, a push followed by a hint, a socket cut; closeAllSockets closes the rest")
    func pushFaults() async throws {
        let server = SyncServer(store: try SQLiteStore(), access: Notes.Rules(), logger: Self.quiet)
        Notes.declare(on: server)
        let faults = ScriptedFaults()
        server.pushFaults = faults
        try await withRunning(server) { port in
            let client = TestClient(port: port)
            _ = try await server.update { try $0.write(0, to: Notes.board, "main") }
            faults.refuse.withLock { $0 = true }
            let refused = TestPushSocket(port: port, path: "board/push", as: "ann")
            #expect(await eventually(within: .seconds(10)) { refused.ending == .failed }, "the upgrade was refused")
            faults.refuse.withLock { $0 = false }

            let reader = TestPushSocket(port: port, path: "board/push", as: "ann")
            #expect(await eventually(within: .seconds(10)) { reader.values(Int.self).map(\.value) == [0] })
            // Version 2 is lost, version 3 is followed by a hint.
            for add in 1...2 {
                #expect(try await client.mutate("board", as: "ann", Notes.BoardChange(add: add), id: "c:\(add)").status == 200)
            }
            #expect(await eventually(within: .seconds(10)) { reader.received.count == 3 }, "\(reader.received)")
            #expect(reader.values(Int.self).map(\.version.counter) == [1, 3])
            #expect(reader.received.last == #"{"changed":true}"#)

            let cut = TestPushSocket(port: port, path: "board/push", as: "bob")
            #expect(await eventually(within: .seconds(10)) { server.openSockets == 2 })
            faults.cutNow()
            #expect(await eventually(within: .seconds(10)) { server.openSockets == 0 }, "both sockets were cut")
            #expect(await eventually(within: .seconds(10)) { cut.ending == .closed && reader.ending == .closed }, "the connections ended")

            let late = TestPushSocket(port: port, path: "board/push", as: "cat")
            #expect(await eventually(within: .seconds(10)) { server.openSockets == 1 })
            server.closeAllSockets()
            #expect(await eventually(within: .seconds(10)) { server.openSockets == 0 })
            #expect(await eventually(within: .seconds(10)) { late.ending == .closed }, "the connection ended")
            // Still accepting.
            let after = TestPushSocket(port: port, path: "board/push", as: "dan")
            #expect(await eventually(within: .seconds(10)) { after.values(Int.self).map(\.value) == [3] })
            for socket in [refused, reader, cut, late, after] { socket.cancel() }
        }
    }

    static var quiet: Logger {
        var logger = Logger(label: "hooks")
        logger.logLevel = .critical
        return logger
    }
}

/// Records the method and path of every request it sees.
private struct Recorder: RouterMiddleware {
    typealias Context = SyncRequestContext
    let seen: MessageLog

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        seen.append("\(request.method) \(request.uri.path)")
        return try await next(request, context)
    }
}

/// Faults a test switches by hand: refuse upgrades; drop version 2, hint after version 3; cut
/// every socket open when told.
private final class ScriptedFaults: PushFaults, Sendable {
    let refuse = Mutex(false)
    private let cuts = Mutex<[AsyncStream<Void>.Continuation]>([])

    func refusal(of key: ResourceKey) -> HTTPResponse.Status? {
        refuse.withLock { $0 } ? .serviceUnavailable : nil
    }

    func socket(following key: ResourceKey) -> any PushSocketFaults {
        let (signal, continuation) = AsyncStream.makeStream(of: Void.self)
        cuts.withLock { $0.append(continuation) }
        return Socket(signal: signal)
    }

    func cutNow() {
        for continuation in cuts.withLock({ $0 }) { continuation.yield() }
    }

    private struct Socket: PushSocketFaults {
        let signal: AsyncStream<Void>
        let mayCut = true

        func fate(of version: Version) -> PushFate {
            switch version.counter {
            case 2: .drop
            case 3: .sendWithHint
            default: .send
            }
        }

        func cut() async {
            for await _ in signal { return }
        }
    }
}

/// Lines recorded by the server's handlers, read by the test.
private final class MessageLog: Sendable {
    private let messages = Mutex<[String]>([])

    func append(_ message: String) {
        messages.withLock { $0.append(message) }
    }

    var all: [String] { messages.withLock { $0 } }
}
