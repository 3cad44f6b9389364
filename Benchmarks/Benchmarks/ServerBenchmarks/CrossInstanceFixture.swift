import BenchmarkSupport
import Foundation
import Logging
import StateLoopServer
import StateLoopServerPostgres
import StateLoopSync
import StateLoopSyncTransports
import Synchronization

/// Two server instances on one PostgreSQL database, and one client with a push socket on the
/// second: a round commits a new value through one instance's store and waits until the client
/// holds it. Writing through the second instance itself is the baseline, in the same run: the
/// difference is the trip across instances (the notification, the follower's read).
final class CrossInstanceFixture: Sendable {
    private let postgres: BenchPostgres
    /// The instance the change is committed on, and the client's instance.
    private let writer: PostgresStore
    private let reader: PostgresStore
    private let host: SyncHost
    private let listening: Task<Void, Never>
    private let arrivals = Arrivals()
    private let connected = Connected()
    private let key = ResourceKey(resource: "counter", id: "bench")

    private init(
        postgres: BenchPostgres, writer: PostgresStore, reader: PostgresStore, host: SyncHost, port: Int
    ) {
        self.postgres = postgres
        self.writer = writer
        self.reader = reader
        self.host = host
        let connected = connected
        let push = WebSocketPush<Int>(url: "ws://127.0.0.1:\(port)/me/counter/push", headers: ["Authorization": "Bearer bench"]) { up in
            connected.state.withLock { $0 = up }
        }
        listening = Task { [arrivals] in
            await push.run { message in
                guard case .value(let versioned) = message else { return }
                let resumed = arrivals.state.withLock { state -> CheckedContinuation<Void, Never>? in
                    state.counter = max(state.counter, versioned.version.counter)
                    guard state.counter >= state.wanted, let waiting = state.waiting else { return nil }
                    state.waiting = nil
                    return waiting
                }
                resumed?.resume()
            }
        }
    }

    /// Starts PostgreSQL, the two stores and the sync server on the second.
    static func start() async throws -> CrossInstanceFixture {
        let postgres = try BenchPostgres.start()
        let (writer, reader) = (try await PostgresStore(url: postgres.url), try await PostgresStore(url: postgres.url))
        var logger = Logger(label: "bench")
        logger.logLevel = .critical
        let server = SyncServer(store: reader, access: MutationFixture.Rules(), logger: logger)
        server.serve(MutationFixture.counters, at: "me/counter") { user, _ in user }
        let (host, port) = try await MutationFixture.serve(server, logger: logger)
        let fixture = CrossInstanceFixture(postgres: postgres, writer: writer, reader: reader, host: host, port: port)
        // A push reaches the socket only once it is connected: wait for that (bounded).
        let deadline = ContinuousClock.now + .seconds(10)
        while !fixture.connected.state.withLock({ $0 }) {
            guard ContinuousClock.now < deadline else {
                await fixture.stop()
                throw SetupFailure(message: "the client's push socket did not connect within 10 s")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        try await fixture.round(acrossInstances: false)
        return fixture
    }

    /// Commits the next value (through the other instance, or the client's own) and waits
    /// until the client holds it.
    func round(acrossInstances: Bool) async throws {
        let store = acrossInstances ? writer : reader
        let version = try await store.write { [key] transaction in
            let current = try transaction.value(of: key).flatMap { Int(String(decoding: $0.json, as: UTF8.self)) } ?? 0
            return try transaction.write(Data("\(current + 1)".utf8), to: key)
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let arrived = arrivals.state.withLock { state in
                state.wanted = version.counter
                if state.counter >= version.counter { return true }
                state.waiting = continuation
                return false
            }
            if arrived { continuation.resume() }
        }
    }

    func stop() async {
        listening.cancel()
        await host.stop()
        writer.close()
        reader.close()
        postgres.stop()
    }
}

/// The newest counter the client holds, and the round waiting for one.
private final class Arrivals: Sendable {
    let state = Mutex<(counter: UInt64, waiting: CheckedContinuation<Void, Never>?, wanted: UInt64)>((0, nil, 0))
}

/// Whether the client's push socket is connected.
private final class Connected: Sendable {
    let state = Mutex(false)
}
