import Foundation
import NIOWebSocket
import ServerTestApp
import StateLoopServerTesting
import StateLoopWire
import TestSupport
import Testing

@testable import StateLoopServer

@Suite("Sync server: pushes", .timeLimit(.minutes(5)))
struct PushTests {
    @Test("a socket gets the value, then each later version with its reader's lastMutationID")
    func valuesInOrder() async throws {
        try await withNotesServer { server, client in
            _ = try await client.mutate("me/notes", as: "ann", Notes.NewNote(text: "a"), id: "c7:1")
            let reader = TestPushSocket(port: client.port, path: "me/notes/push", as: "ann", clientID: "c7")
            let other = TestPushSocket(port: client.port, path: "me/notes/push", as: "ann", clientID: "d7")
            #expect(await eventually(within: .seconds(10)) { reader.values([String].self).count == 1 && other.values([String].self).count == 1 })
            for (index, text) in ["b", "c", "d"].enumerated() {
                _ = try await client.mutate("me/notes", as: "ann", Notes.NewNote(text: text), id: "c7:\(index + 2)")
            }
            #expect(await eventually(within: .seconds(10)) { reader.values([String].self).last?.value.count == 4 })
            let values = reader.values([String].self)
            #expect(values.first == Versioned(["a"], version: Version(epoch: server.epoch, counter: 1), lastMutationID: 1))
            // In version order, each number the one true at its commit (coalescing may skip some).
            #expect(values.map(\.version.counter) == values.map(\.version.counter).sorted())
            #expect(values.allSatisfy { $0.lastMutationID == $0.version.counter })
            #expect(await eventually(within: .seconds(10)) { other.values([String].self).last?.value.count == 4 })
            #expect(other.values([String].self).allSatisfy { $0.lastMutationID == nil })
            reader.cancel()
            other.cancel()
        }
    }

    @Test("a server-side update reaches every socket of the key, and no other")
    func serverUpdateFansOut() async throws {
        try await withNotesServer { server, client in
            _ = try await server.update { try $0.write(0, to: Notes.board, "main") }
            let readers = ["ann", "bob", "cid"].map { TestPushSocket(port: client.port, path: "board/push", as: $0) }
            let notes = TestPushSocket(port: client.port, path: "me/notes/push", as: "ann")
            #expect(await eventually(within: .seconds(10)) { readers.allSatisfy { $0.values(Int.self).count == 1 } })
            _ = try await server.update { transaction in
                try transaction.write(41, to: Notes.board, "main")
                try transaction.write(42, to: Notes.board, "main")
            }
            #expect(await eventually(within: .seconds(10)) { readers.allSatisfy { $0.values(Int.self).last?.value == 42 } })
            // One transaction, one version: its last write.
            #expect(readers.allSatisfy { $0.values(Int.self).map(\.version.counter) == [1, 2] })
            #expect(notes.received.isEmpty)
            for reader in readers + [notes] { reader.cancel() }
        }
    }

    @Test("a change followed by more sockets than one drain task takes per event loop reaches every one, each version in order")
    func wideFanOut() async throws {
        // Batches of 3 writers, so that 24 sockets on the server's loops cross several batches
        // (the default, 128, would need hundreds of sockets, and their load would slow the
        // tests running beside this one).
        var configuration = SyncServerConfiguration()
        configuration.pushDrainsPerTask = 3
        try await withNotesServer(configuration: configuration) { server, client in
            _ = try await server.update { try $0.write(0, to: Notes.board, "main") }
            let readers = (0..<24).map { TestPushSocket(port: client.port, path: "board/push", as: "reader-\($0)") }
            defer { for reader in readers { reader.cancel() } }
            #expect(await eventually(within: .seconds(30)) { readers.allSatisfy { $0.values(Int.self).count == 1 } }, "not every socket opened")
            for value in 1...3 {
                _ = try await server.update { try $0.write(value, to: Notes.board, "main") }
            }
            let reached = await eventually(within: .seconds(30)) { readers.allSatisfy { $0.values(Int.self).last?.value == 3 } }
            #expect(reached, "\(readers.filter { $0.values(Int.self).last?.value != 3 }.count) of 24 sockets missed the last change")
            // A fast reader may have a version coalesced away, never one out of order.
            for reader in readers {
                let counters = reader.values(Int.self).map(\.version.counter)
                #expect(counters == counters.sorted() && Set(counters).count == counters.count, "\(counters)")
            }
        }
    }

    @Test("access taken away while a socket is open: the next change closes it instead of reaching it")
    func accessRevoked() async throws {
        try await withNotesServer { server, client in
            _ = try await server.update { try $0.write(1, to: Notes.board, "main") }
            let ivy = TestPushSocket(port: client.port, path: "board/push", as: "ivy")
            let ann = TestPushSocket(port: client.port, path: "board/push", as: "ann")
            #expect(await eventually(within: .seconds(10)) { ivy.values(Int.self).count == 1 && ann.values(Int.self).count == 1 })
            Notes.banned.withLock { _ = $0.insert("ivy") }
            defer { Notes.banned.withLock { _ = $0.remove("ivy") } }
            _ = try await server.update { try $0.write(2, to: Notes.board, "main") }
            #expect(await eventually(within: .seconds(10)) { ann.values(Int.self).last?.value == 2 })
            _ = try await ivy.closeFrame()
            #expect(ivy.values(Int.self).map(\.value) == [1])
            #expect(try await client.send("GET", "board", as: "ivy").status == 404)
            ann.cancel()
        }
    }

    @Test("a session that ends between the upgrade's decision and the socket's registration: the socket closes with no value")
    func signedOutWhileOpening() async throws {
        try await withNotesServer { server, client in
            _ = try await server.update { try $0.write(1, to: Notes.board, "main") }
            // The upgrade's decision is the one lookup left; the socket's own check comes after.
            Notes.sessionLookupsLeft.withLock { $0["zed"] = 1 }
            defer { Notes.sessionLookupsLeft.withLock { $0["zed"] = nil } }
            // A commit lands after the socket registered, before its check answers: it must not
            // reach the signed-out reader either.
            Notes.sessionEnded.withLock { $0 = { _ in _ = try? await server.update { try $0.write(2, to: Notes.board, "main") } } }
            defer { Notes.sessionEnded.withLock { $0 = nil } }
            let zed = TestPushSocket(port: client.port, path: "board/push", as: "zed")
            let closed = try await zed.closeFrame()
            #expect(closed?.closeCode == .policyViolation)
            #expect(zed.received.isEmpty, "\(zed.received)")
            #expect(await eventually(within: .seconds(10)) { server.openSockets == 0 })
        }
    }

    @Test(
        "a push socket does not outlive its session: a session that ends with no closeSockets(of:) (an expiry) closes it at the next check, as signed out"
    )
    func sessionExpiryClosesSocket() async throws {
        var configuration = SyncServerConfiguration()
        configuration.sessionCheckInterval = .milliseconds(200)
        try await withNotesServer(configuration: configuration) { server, client in
            _ = try await server.update { try $0.write(1, to: Notes.board, "main") }
            // Two lookups: the upgrade's decision and the socket's own check; the next, a
            // periodic check, finds the session over.
            Notes.sessionLookupsLeft.withLock { $0["yan"] = 2 }
            defer { Notes.sessionLookupsLeft.withLock { $0["yan"] = nil } }
            let yan = TestPushSocket(port: client.port, path: "board/push", as: "yan")
            let bob = TestPushSocket(port: client.port, path: "board/push", as: "bob")
            // Whether yan's first value comes before the first check depends on the machine's
            // load; that it is closed, and gets nothing after, does not.
            #expect(await eventually(within: .seconds(20)) { bob.received.count == 1 }, "bob got the board")
            let closed = try await yan.closeFrame(within: .seconds(20))
            #expect(closed?.closeCode == .policyViolation)
            _ = try await server.update { try $0.write(2, to: Notes.board, "main") }
            #expect(await eventually(within: .seconds(20)) { bob.received.count == 2 }, "a signed-in reader beside it is still served")
            #expect(yan.values(Int.self).allSatisfy { $0.value == 1 }, "nothing after the session ended: \(yan.received)")
            #expect(await eventually(within: .seconds(20)) { server.openSockets == 1 })
            bob.cancel()
        }
    }

    @Test(
        "a refused upgrade is answered with its own status and JSON error, then closed: 400 for bad WebSocket headers, 401, 404, 429 with Retry-After"
    )
    func refusedUpgradeSaysWhy() async throws {
        let configuration = SyncServerConfiguration(maximumSocketsPerPrincipal: 1)
        try await withNotesServer(configuration: configuration) { server, client in
            func upgrade(_ path: String, as user: String?, version: Int = 13) async throws -> String {
                let connection = try RawConnection(port: client.port)
                let token = user.map { "Authorization: Bearer t-\($0)\r\n" } ?? ""
                _ = connection.send(
                    Array(
                        ("GET /\(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: \(version)\r\n\(token)\r\n").utf8))
                let (text, closed) = await connection.readUntilClosed(within: .seconds(30))
                #expect(closed, "the refused upgrade left its connection open: \(text)")
                return text
            }
            // Headers NIO's upgrader refuses before any route decides: it used to get no answer.
            let badVersion = try await upgrade("board/push", as: "ann", version: 8)
            #expect(badVersion.hasPrefix("HTTP/1.1 400") && badVersion.contains(#""error":"badUpgrade""#), "\(badVersion)")
            let anonymous = try await upgrade("board/push", as: nil)
            #expect(anonymous.hasPrefix("HTTP/1.1 401") && anonymous.contains(#""error":"unauthorized""#), "\(anonymous)")
            let hidden = try await upgrade("me/notes/push", as: "eve")
            #expect(hidden.hasPrefix("HTTP/1.1 404") && hidden.contains(#""error":"notFound""#), "\(hidden)")
            let first = TestPushSocket(port: client.port, path: "board/push", as: "bob")
            #expect(await eventually(within: .seconds(10)) { server.openSockets == 1 })
            let second = try await upgrade("board/push", as: "bob")
            #expect(second.hasPrefix("HTTP/1.1 429") && second.lowercased().contains("retry-after: 5"), "\(second)")
            first.cancel()
        }
    }

    @Test("closing a principal's sockets (a sign-out) ends them; others stay")
    func closeSocketsOfPrincipal() async throws {
        try await withNotesServer { server, client in
            _ = try await server.update { try $0.write(1, to: Notes.board, "main") }
            let ann = TestPushSocket(port: client.port, path: "board/push", as: "ann")
            let bob = TestPushSocket(port: client.port, path: "board/push", as: "bob")
            #expect(await eventually(within: .seconds(10)) { server.openSockets == 2 })
            server.closeSockets(of: "ann")
            _ = try await ann.closeFrame()
            #expect(await eventually(within: .seconds(10)) { server.openSockets == 1 })
            bob.cancel()
        }
    }

    @Test("limits: a frame too large closes with 1009; the sockets per principal are capped")
    func socketLimits() async throws {
        let configuration = SyncServerConfiguration(maximumFrameBytes: 1_000, maximumSocketsPerPrincipal: 2)
        try await withNotesServer(configuration: configuration) { server, client in
            let large = TestPushSocket(port: client.port, path: "board/push", as: "ann", send: String(repeating: "x", count: 5_000))
            let tooLarge = try await large.closeFrame()
            #expect(tooLarge?.closeCode == .messageTooLarge)
            let first = TestPushSocket(port: client.port, path: "board/push", as: "bob")
            let second = TestPushSocket(port: client.port, path: "me/notes/push", as: "bob")
            #expect(await eventually(within: .seconds(10)) { server.openSockets == 2 })
            let third = TestPushSocket(port: client.port, path: "board/push", as: "bob")
            await #expect(throws: (any Error).self) { try await third.closeFrame() }
            // Another principal is not counted against bob.
            let ann = TestPushSocket(port: client.port, path: "board/push", as: "ann")
            #expect(await eventually(within: .seconds(10)) { server.openSockets == 3 })
            for reader in [first, second, ann] { reader.cancel() }
            #expect(await eventually(within: .seconds(10)) { server.openSockets == 0 })
        }
    }

    @Test("shutting down closes every socket with 'going away' once its outbox is sent")
    func gracefulShutdown() async throws {
        var reader: TestPushSocket?
        try await withNotesServer { server, client in
            _ = try await server.update { try $0.write(1, to: Notes.board, "main") }
            reader = TestPushSocket(port: client.port, path: "board/push", as: "ann")
            #expect(await eventually(within: .seconds(10)) { reader?.values(Int.self).count == 1 })
        }
        let closed = try await reader?.closeFrame()
        #expect(closed?.closeCode == .goingAway)
    }

    @Test("an application stopped without the sync server's own shutdown still closes its push sockets with 'going away', and stops in time")
    func quiesceClosesSockets() async throws {
        let server = SyncServer(store: try SQLiteStore(), access: Notes.Rules())
        Notes.declare(on: server)
        _ = try await server.update { try $0.write(1, to: Notes.board, "main") }
        let (host, port) = try await startHost(server, shutdownTimeout: .seconds(600), applicationOnly: true)
        let reader = TestPushSocket(port: port, path: "board/push", as: "ann")
        #expect(await eventually(within: .seconds(10)) { reader.values(Int.self).count == 1 })
        let stopping = ContinuousClock.now
        async let stopped: Void = host.stop()
        #expect(try await reader.closeFrame()?.closeCode == .goingAway)
        await stopped
        // Against the 600 s graceful shutdown: a hang guard with room for a loaded machine.
        #expect(ContinuousClock.now - stopping < .seconds(120), "stopped after \(ContinuousClock.now - stopping)")
    }

    @Test("a socket that does not read is closed after the timeout; meanwhile its outbox keeps the newest value")
    func slowReaderClosed() async throws {
        // Long enough for several commits to land while the socket's write waits, however
        // slow a commit is on the machine (CI's took 170 ms each): the second of them is the
        // one that coalesces.
        let configuration = SyncServerConfiguration(slowReaderTimeout: .seconds(3))
        try await withNotesServer(configuration: configuration) { server, client in
            _ = try await server.update { try $0.write("", to: Notes.pages, "main") }
            let socket = try SilentSocket(port: client.port, path: "pages/push", token: "t-ann")
            #expect(await eventually(within: .seconds(10)) { server.openSockets == 1 })
            // A reader of the same key beside it, which reads: the stalled one must not hold it up.
            let reader = TestPushSocket(port: client.port, path: "pages/push", as: "ann")
            defer { reader.cancel() }
            #expect(await eventually(within: .seconds(10)) { server.openSockets == 2 })
            // Pages of 10 KB until the socket's buffers are full, a write waits, and the
            // timeout closes the socket.
            var rounds = 0
            while server.openSockets == 2, rounds < 20_000 {
                rounds += 1
                let page = String(repeating: "\(rounds % 10)", count: 10_000)
                _ = try await server.update { try $0.write(page, to: Notes.pages, "main") }
                if rounds % 100 == 0 { try await Task.sleep(for: .milliseconds(10)) }
            }
            #expect(await eventually(within: .seconds(10)) { server.openSockets == 1 }, "after \(rounds) rounds")
            // The reading socket is still served: the next page reaches it.
            _ = try await server.update { try $0.write("last", to: Notes.pages, "main") }
            #expect(await eventually(within: .seconds(10)) { reader.received.last?.contains("\"last\"") == true })
            // Closed for real: the connection ends (no close frame could get through).
            #expect(await socket.waitForEnd(within: .seconds(30)), "the connection stayed open")
            let metrics = server.renderedMetrics
            #expect(metrics.contains("stateloop_slow_readers_closed_total 1"), "\(metrics)")
            #expect(!metrics.contains("stateloop_pushes_coalesced_total 0"), "\(metrics)")
            socket.close()
        }
    }

    @Test("the metrics route renders requests, pushes and sockets in Prometheus's format")
    func metricsRoute() async throws {
        try await withNotesServer { _, client in
            _ = try await client.mutate("me/notes", as: "ann", Notes.NewNote(text: "a"), id: "c:1")
            _ = try await client.send("GET", "me/notes", as: nil)
            let (status, body) = try await client.send("GET", "metrics", as: nil)
            let text = String(decoding: body, as: UTF8.self)
            #expect(status == 200)
            #expect(text.contains(#"stateloop_requests_total{route="POST /me/notes",status="200"} 1"#), "\(text)")
            #expect(text.contains(#"stateloop_requests_total{route="GET /me/notes",status="401"} 1"#))
            #expect(text.contains("stateloop_commit_seconds"))
        }
    }
}
