import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOWebSocket
import ServerTestApp
import ServiceLifecycle
import StateLoopServerTesting
import StateLoopWire
import Synchronization
import TestSupport
import Testing

@testable import StateLoopServer

/// The host that starts, stops and restarts a server app in this process (`SyncHost`).
@Suite("SyncHost: a server app's lifecycle in one process", .timeLimit(.minutes(4)))
struct SyncHostTests {
    @Test("a start on port 0 returns the bound port, which answers; the port and base URL are known while running only")
    func startsOnFreePort() async throws {
        let server = Self.notesServer()
        _ = try await server.update { try $0.write(7, to: Notes.board, "main") }
        let host = Self.host(server)
        #expect(host.port == nil && host.baseURL == nil)
        let port = try await host.start()
        #expect(port > 0)
        #expect(host.port == port)
        #expect(host.baseURL == URL(string: "http://127.0.0.1:\(port)"))
        let (status, body) = try await TestClient(port: port).send("GET", "board", as: "ann")
        #expect(status == 200)
        #expect(try JSONDecoder().decode(Versioned<Int>.self, from: body).value == 7)
        await host.stop()
        #expect(host.port == nil && host.baseURL == nil)
        await #expect(throws: (any Error).self, "the port still answers after the stop") {
            _ = try await TestClient(port: port).send("GET", "board", as: "ann")
        }
    }

    @Test("a second start throws while the first runs on; a taken port, or an application that ends before it listens, fails the start")
    func startFailures() async throws {
        let server = Self.notesServer()
        let host = Self.host(server)
        let port = try await host.start()
        await #expect(throws: SyncHost.Failure.self) { try await host.start() }
        #expect(try await TestClient(port: port).send("GET", "board", as: "ann").status == 404)

        // Another host on the same port: the start says so, and what to do.
        let other = SyncHost(port: port, logger: Self.quiet) { port in .init(server, application: server.application(port: port)) }
        let taken = await #expect(throws: SyncHost.PortInUse.self) { try await other.start() }
        #expect(taken == SyncHost.PortInUse(port: port))
        #expect(taken?.description.hasPrefix("port \(port) is in use: another process listens there") == true, "\(String(describing: taken))")
        #expect(other.port == nil)
        await host.stop()

        // Work the application does before it listens fails: so does the start, with its error.
        struct NotReady: Error {}
        let failing = SyncHost(logger: Self.quiet) { port in
            var application = server.application(port: port)
            application.beforeServerStarts { throw NotReady() }
            return .init(server, application: application)
        }
        await #expect(throws: NotReady.self) { try await failing.start() }
        #expect(failing.port == nil)
    }

    @Test(
        "a stop closes push sockets with 'going away' first and cuts a client that does not answer after the grace; a client reconnecting meanwhile is refused, and none is left open"
    )
    func stopClosesSocketsFirst() async throws {
        // A slow-reader timeout and a shutdown bound far beyond the socket grace: the socket
        // that never answers is cut by the host's grace, not by either of them.
        let server = Self.notesServer(configuration: SyncServerConfiguration(slowReaderTimeout: .seconds(120)))
        _ = try await server.update { try $0.write(1, to: Notes.board, "main") }
        // The app's own service, which looks at the sockets as the group's shutdown reaches it.
        let witness = ShutdownWitness(server: server)
        // The grace is the window in which the reconnecting client must try again and be
        // refused: 3 s, so that a client starved of CPU on a loaded machine still tries in it.
        let host = SyncHost(shutdownTimeout: .seconds(60), socketGrace: .seconds(3), logger: Self.quiet) { port in
            .init(server, application: server.application(port: port), services: [witness])
        }
        let port = try await host.start()
        let reader = TestPushSocket(port: port, path: "board/push", as: "ann")
        let silent = try SilentSocket(port: port, path: "board/push", token: "t-bob")
        defer { silent.close() }
        #expect(await eventually(within: .seconds(10)) { server.openSockets == 2 }, "the sockets never opened")
        #expect(await eventually(within: .seconds(10)) { reader.values(Int.self).count == 1 })
        // A client that reconnects at once whenever its socket ends, through the whole stop.
        let reconnecting = Reconnecting(port: port)
        defer { reconnecting.cancelAll() }
        #expect(await eventually(within: .seconds(10)) { server.openSockets == 3 }, "the reconnecting socket never opened")

        let stopping = ContinuousClock.now
        await host.stop()
        let took = ContinuousClock.now - stopping
        // Its attempts during the stop are refused (and, after it, find no listener): it stops
        // trying once one has been refused, however late a loaded machine runs it.
        #expect(await eventually(within: .seconds(10)) { reconnecting.wasRefused }, "no reconnection was refused")
        reconnecting.finish()
        // Closed before the services' graceful shutdown began, not by it.
        #expect(witness.socketsAtShutdown == 0, "sockets open as the group began to stop: \(String(describing: witness.socketsAtShutdown))")
        // A hang guard against the 60 s bound and the 120 s timeout.
        #expect(took < .seconds(30), "the stop took \(took)")
        #expect(try await reader.closeFrame()?.closeCode == .goingAway)
        #expect(await silent.waitForEnd(within: .seconds(30)), "the silent socket's connection was left open")
        #expect(server.openSockets == 0)
        // Judged on the server's side: the test's WebSocket client can miss a connection cut
        // during its upgrade, and wait on it for good.
        #expect(server.connections.count == 0, "a connection was left open")
    }

    @Test(
        "a request under way finishes within the stop's bound; one that hangs, even ignoring its cancellation, holds the stop no longer than the bound and has its connection closed"
    )
    func hangingRequestBounded() async throws {
        let server = Self.notesServer()
        let gate = Gate()
        let slowArrived = Gate()
        let application = server.application(
            port: 0,
            routes: { router in
                router.get("slow") { _, _ in
                    slowArrived.open()
                    try await Task.sleep(for: .milliseconds(200))
                    return "done"
                }
                router.get("hang") { _, _ in
                    await gate.wait()
                    return "released"
                }
            })
        let host = SyncHost(shutdownTimeout: .seconds(5), logger: Self.quiet) { _ in .init(server, application: application) }
        let port = try await host.start()
        defer { gate.open() }
        let hanging = try RawConnection(port: port)
        hanging.send(Array("GET /hang HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
        #expect(await eventually(within: .seconds(10)) { gate.waiting }, "the hanging request never arrived")
        async let slow = TestClient(port: port).send("GET", "slow", as: nil)
        // The slow request is under way before the stop begins (its handler sleeps 200 ms).
        #expect(await eventually(within: .seconds(10)) { slowArrived.isOpen }, "the slow request never arrived")

        let stopping = ContinuousClock.now
        await host.stop()
        let took = ContinuousClock.now - stopping
        // Twice the 5 s bound at most (the group's, then the wait for what ignores it), against a
        // request that never ends: a hang guard with room for a loaded machine.
        #expect(took < .seconds(40), "the stop took \(took)")
        #expect(try await slow.status == 200)
        let (_, closed) = await hanging.readUntilClosed(within: .seconds(30))
        #expect(closed, "the hanging request's connection was left open")
    }

    @Test("a restart answers on the same port, with the same sync server (its push sockets taken again) or a new one on the same store")
    func restartSamePort() async throws {
        let store = try SQLiteStore()
        // The same server at every start.
        let same = Self.notesServer(store: store)
        let keeping = Self.host(same)
        let port = try await keeping.start()
        _ = try await same.update { try $0.write(1, to: Notes.board, "main") }
        #expect(try await keeping.restart() == port)
        #expect(keeping.port == port)
        let reader = TestPushSocket(port: port, path: "board/push", as: "ann")
        defer { reader.cancel() }
        #expect(await eventually(within: .seconds(10)) { reader.values(Int.self).last?.value == 1 }, "no push socket after the restart")
        await keeping.stop()

        // A new server at every start, on the store the app keeps.
        let launches = Mutex(0)
        let renewing = SyncHost(logger: Self.quiet) { port in
            launches.withLock { $0 += 1 }
            let server = Self.notesServer(store: store)
            return .init(server, application: server.application(port: port))
        }
        let first = try await renewing.start()
        await renewing.stop()
        // Down, then up again on the port it had (`start` after a stop binds it too).
        #expect(try await renewing.start() == first)
        #expect(try await renewing.restart() == first)
        #expect(launches.withLock { $0 } == 3)
        let (status, body) = try await TestClient(port: first).send("GET", "board", as: "ann")
        #expect(status == 200)
        #expect(try JSONDecoder().decode(Versioned<Int>.self, from: body).value == 1)
        await renewing.stop()
    }

    @Test("a stop on a host never started does nothing; a second stop does nothing; a stop during a start stops what it started")
    func stopWithoutStart() async throws {
        let server = Self.notesServer()
        let host = Self.host(server)
        await host.stop()
        #expect(host.port == nil)
        try await host.start()
        await host.stop()
        await host.stop()
        #expect(host.port == nil)
        // A stop called while a start is under way (its launch waits) waits for it, then stops
        // what it started.
        let launching = Gate()
        let proceed = Gate()
        let slowHost = SyncHost(logger: Self.quiet) { port in
            launching.open()
            await proceed.wait()
            return .init(server, application: server.application(port: port))
        }
        async let started = slowHost.start()
        #expect(await eventually(within: .seconds(10)) { launching.isOpen }, "the start never launched")
        async let stopped: Void = slowHost.stop()
        proceed.open()
        let startedPort = try await started
        await stopped
        #expect(startedPort > 0)
        #expect(slowHost.port == nil)
        await #expect(throws: (any Error).self, "the port still answers after the stop") {
            _ = try await TestClient(port: startedPort).send("GET", "board", as: "ann")
        }
    }

    @Test(
        "the app's own service runs beside the server and is ended by the stop's graceful shutdown; one that throws by itself stops the host, and run() throws"
    )
    func extraServices() async throws {
        let server = Self.notesServer()
        let ticker = Ticker(server: server)
        let host = SyncHost(logger: Self.quiet) { port in
            .init(server, application: server.application(port: port), services: [ticker])
        }
        let port = try await host.start()
        #expect(await eventually(within: .seconds(10)) { ticker.ticks >= 2 }, "the service never ran")
        // It writes through the server: its changes are served.
        #expect(try await TestClient(port: port).send("GET", "board", as: "ann").status == 200)
        await host.stop()
        #expect(ticker.ending == .gracefulShutdown)

        // A service that throws by itself ends the host: nothing listens any more.
        struct Broken: Error {}
        let breaking = Gate()
        let failing = SyncHost(logger: Self.quiet) { port in
            .init(server, application: server.application(port: port), services: [Failing(error: Broken(), after: breaking)])
        }
        let failingPort = try await failing.start()
        breaking.open()
        #expect(await eventually(within: .seconds(10)) { failing.port == nil }, "the host kept running")
        await #expect(throws: (any Error).self) { _ = try await TestClient(port: failingPort).send("GET", "board", as: "ann") }

        // Run as a service, such a host ends the group around it with a failure (a process exits).
        let breakingAgain = Gate()
        let failingService = SyncHost(logger: Self.quiet) { port in
            .init(server, application: server.application(port: port), services: [Failing(error: Broken(), after: breakingAgain)])
        }
        let group = ServiceGroup(services: [failingService], logger: Self.quiet)
        let running = Task { try await group.run() }
        #expect(await eventually(within: .seconds(10)) { failingService.port != nil }, "the host never started")
        breakingAgain.open()
        await #expect(throws: SyncHost.Failure.self) { try await running.value }
    }

    @Test("as a service, the host runs until the group around it shuts down, then stops")
    func hostAsService() async throws {
        let server = Self.notesServer()
        let host = Self.host(server)
        let group = ServiceGroup(services: [host], logger: Self.quiet)
        let running = Task { try await group.run() }
        #expect(await eventually(within: .seconds(10)) { host.port != nil }, "the host never started")
        let port = try #require(host.port)
        #expect(try await TestClient(port: port).send("GET", "board", as: "ann").status == 404)
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(host.port == nil)
    }

    // MARK: Helpers

    static var quiet: Logger {
        var logger = Logger(label: "stateloop.host.test")
        logger.logLevel = .critical
        return logger
    }

    static func notesServer(store: (any ServerStore)? = nil, configuration: SyncServerConfiguration = SyncServerConfiguration()) -> SyncServer<
        Notes.Rules
    > {
        let server = SyncServer(store: store ?? (try! SQLiteStore()), access: Notes.Rules(), configuration: configuration, logger: quiet)
        Notes.declare(on: server)
        return server
    }

    /// A host that runs `server` on port 0, the same server at every start.
    static func host(_ server: SyncServer<Notes.Rules>) -> SyncHost {
        SyncHost(logger: quiet) { port in .init(server, application: server.application(port: port)) }
    }
}

/// A request handler's wait that ignores cancellation, opened by the test.
private final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    var waiting: Bool {
        state.withLock { !$0.waiters.isEmpty }
    }

    var isOpen: Bool {
        state.withLock { $0.open }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state in
                guard !state.open else { return true }
                state.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// A push client that opens a new socket whenever its last one ended, until finished.
private final class Reconnecting: Sendable {
    private let readers = Readers()
    private let task: Task<Void, Never>

    private final class Readers: Sendable {
        let list = Mutex<[TestPushSocket]>([])
    }

    init(port: Int) {
        let readers = readers
        task = Task {
            while !Task.isCancelled {
                let reader = TestPushSocket(port: port, path: "board/push", as: "cid")
                readers.list.withLock { $0.append(reader) }
                while reader.ending == nil, !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(2))
                }
            }
        }
    }

    /// Stops opening sockets.
    func finish() {
        task.cancel()
    }

    /// Whether a reconnection was refused (its upgrade, or its connection).
    var wasRefused: Bool {
        readers.list.withLock { $0.contains { $0.ending == .failed } }
    }

    /// Closes every socket it opened from this side.
    func cancelAll() {
        for reader in readers.list.withLock({ $0 }) { reader.cancel() }
    }
}

/// The app's own service: a timer that writes the board through the server until the graceful
/// shutdown, and says how it ended.
private final class Ticker: Service, Sendable {
    enum Ending: Equatable { case gracefulShutdown, cancelled }

    let server: SyncServer<Notes.Rules>
    private let state = Mutex<(ticks: Int, asked: Bool, ending: Ending?)>((0, false, nil))

    init(server: SyncServer<Notes.Rules>) {
        self.server = server
    }

    var ticks: Int { state.withLock { $0.ticks } }
    var ending: Ending? { state.withLock { $0.ending } }

    func run() async throws {
        await withGracefulShutdownHandler {
            while !state.withLock({ $0.asked }), !Task.isCancelled {
                let tick = state.withLock { state in
                    state.ticks += 1
                    return state.ticks
                }
                _ = try? await server.update { try $0.write(tick, to: Notes.board, "main") }
                try? await Task.sleep(for: .milliseconds(20))
            }
        } onGracefulShutdown: {
            self.state.withLock { $0.asked = true }
        }
        state.withLock { $0.ending = Task.isCancelled ? .cancelled : .gracefulShutdown }
    }
}

/// The app's own service, which counts the open push sockets as the graceful shutdown reaches
/// it (the group shuts the app's services down first).
private final class ShutdownWitness: Service, Sendable {
    let server: SyncServer<Notes.Rules>
    private let seen = Mutex<Int?>(nil)

    init(server: SyncServer<Notes.Rules>) {
        self.server = server
    }

    var socketsAtShutdown: Int? { seen.withLock { $0 } }

    func run() async throws {
        try? await gracefulShutdown()
        let open = server.openSockets
        seen.withLock { $0 = open }
    }
}

/// A service that throws once its gate opens.
private struct Failing: Service {
    let error: any Error
    let after: Gate

    func run() async throws {
        await after.wait()
        throw error
    }
}
