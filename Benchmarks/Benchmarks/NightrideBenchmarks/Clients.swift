import BenchmarkSupport
import Foundation
import Logging
import NightrideClient
import StateLoopSync
import StateLoopSyncTransports
import Synchronization

/// One simulated Nightride client: a logged-in user's driver mode as a `RemoteResource<Bool>`,
/// wired as `NightrideClient` wires it (`HTTPPull` + `WebSocketPush`, the socket's connection
/// state as the connectivity source), with one `values()` subscriber task that reports every
/// version it receives to a ``FanOutProbe``. Lighter than a whole `NightrideClient`: no ride
/// resource, no optimistic layer, no journaled system.
final class SimulatedClient: Sendable {
    let resource: RemoteResource<Bool>
    private let subscriber: Task<Void, Never>

    init(index: Int, api: NightrideAPI, probe: FanOutProbe, connections: Tally) {
        let path = "/me/driver-mode"
        let (online, report) = AsyncStream.makeStream(of: Bool.self, bufferingPolicy: .bufferingNewest(1))
        let backoff = ClientOptions().reconnectBackoff
        let server = api.endpoint()
        var sources = ResourceSources(
            pull: HTTPPull<Bool>(url: server.url(path), headers: server.headers),
            push: WebSocketPush<Bool>(
                url: server.pushURL(path + "/push"),
                headers: server.headers,
                initialBackoff: backoff,
                maxBackoff: backoff * 4,
                logger: Logger(label: "nightride.push", factory: { _ in SwiftLogNoOpLogHandler() }),
                onConnectionChange: { isOnline in
                    if isOnline { connections.add(1) }
                    report.yield(isOnline)
                }
            )
        )
        sources.connectivity = { send in
            for await isOnline in online {
                await send(isOnline)
            }
        }
        resource = RemoteResource(sources: sources, policy: .nightrideBenchmark)
        let values = resource.values()
        subscriber = Task {
            for await value in values {
                probe.received(Int(value.version.counter), client: index)
            }
        }
    }

    func stop() {
        subscriber.cancel()
    }
}

extension ResourcePolicy {
    /// The demo client's policy (`ClientOptions.demoPolicy`) without polling: a poll every 5 s
    /// from 1,000 clients would put 200 requests a second on the server, in the middle of the
    /// measurement.
    static var nightrideBenchmark: ResourcePolicy {
        var policy = ClientOptions.demoPolicy
        policy.pollInterval = nil
        return policy
    }
}

/// Where every client's subscriber reports the versions it receives, and what a round waits on.
///
/// A round expects one version counter for every client. Each subscriber takes the time as soon
/// as it has the value, then records it under the lock; the last one wakes the round.
final class FanOutProbe: Sendable {
    private struct State {
        var expected = Int.max
        var start = ContinuousClock.now
        var latest: [Int]
        var latencies: [Duration] = []
        var waiter: CheckedContinuation<Void, Never>?
    }

    let clients: Int
    private let state: Mutex<State>

    init(clients: Int) {
        self.clients = clients
        state = Mutex(State(latest: Array(repeating: 0, count: clients)))
        state.withLock { $0.latencies.reserveCapacity(clients) }
    }

    /// Expects `counter` from every client, timing arrivals from `start`.
    func expect(_ counter: Int, from start: ContinuousClock.Instant) {
        state.withLock { state in
            state.expected = counter
            state.start = start
            state.latencies.removeAll(keepingCapacity: true)
            for client in state.latest.indices where state.latest[client] >= counter {
                state.latencies.append(.zero)
            }
        }
    }

    /// Called by client `client`'s subscriber with each version counter it receives.
    func received(_ counter: Int, client: Int) {
        let now = ContinuousClock.now
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            let before = state.latest[client]
            state.latest[client] = max(before, counter)
            guard counter >= state.expected, before < state.expected else { return nil }
            state.latencies.append(state.start.duration(to: now))
            return state.latencies.count == clients ? state.waiter.take() : nil
        }
        waiter?.resume()
    }

    /// Returns once every client has the expected version (or `limit` passed), with the
    /// latencies in arrival order.
    func wait(orFailAfter limit: Duration) async throws -> [Duration] {
        let watchdog = Task {
            try await Task.sleep(for: limit)
            let waiter = state.withLock { $0.waiter.take() }
            waiter?.resume()
        }
        defer { watchdog.cancel() }
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                if state.latencies.count >= clients { return true }
                state.waiter = continuation
                return false
            }
            if done { continuation.resume() }
        }
        let latencies = state.withLock { $0.latencies }
        guard latencies.count == clients else {
            throw SetupFailure(message: "only \(latencies.count) of \(clients) clients got the change within \(limit)")
        }
        return latencies
    }
}

/// A counter many tasks add to.
final class Tally: Sendable {
    private let count = Atomic<Int>(0)

    func add(_ delta: Int) {
        count.add(delta, ordering: .relaxed)
    }

    var value: Int {
        count.load(ordering: .relaxed)
    }
}

/// Polls `condition` every 5 ms until it holds; fails after `limit`.
func waitUntil(_ limit: Duration, _ message: @autoclosure () -> String, _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + limit
    while !condition() {
        guard ContinuousClock.now < deadline else { throw SetupFailure(message: message()) }
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// The name of the benchmark's `index`-th user.
func rider(_ index: Int) -> String {
    String(format: "rider-%04d", index)
}

/// The names of the benchmark's first `count` users.
func riders(_ count: Int) -> [String] {
    (0..<count).map(rider)
}

/// Logs in `count` users (`rider-0000`, …) on the server at `url`, 16 requests at a time.
func logIn(count: Int, server url: URL) async throws -> [NightrideAPI] {
    try await withThrowingTaskGroup(of: (Int, NightrideAPI).self) { group in
        var users = [NightrideAPI?](repeating: nil, count: count)
        var next = 0
        func start() {
            let index = next
            next += 1
            group.addTask {
                (index, try await NightrideAPI.login(server: url, name: rider(index), password: "rider-pass"))
            }
        }
        while next < min(16, count) { start() }
        while let (index, api) = try await group.next() {
            users[index] = api
            if next < count { start() }
        }
        return users.map { $0! }
    }
}

/// The simulated clients of a run, connected in batches.
final class ClientFleet: Sendable {
    private let clients: Mutex<[SimulatedClient]>
    let probe: FanOutProbe

    /// Connects one client per user, `batch` at a time, each batch once its sockets are open
    /// (as the clients see it) and its subscribers have the first value. `socketsOpen` may add
    /// the server's own count of open sockets to the condition.
    static func connect(
        _ users: [NightrideAPI],
        batch: Int = 100,
        socketsOpen: @Sendable () -> Int? = { nil }
    ) async throws -> ClientFleet {
        let probe = FanOutProbe(clients: users.count)
        let connections = Tally()
        var clients: [SimulatedClient] = []
        clients.reserveCapacity(users.count)
        // Version 1 is what every user has after login: the pull, or the socket's first message.
        probe.expect(1, from: .now)
        for start in stride(from: 0, to: users.count, by: batch) {
            for index in start..<min(start + batch, users.count) {
                clients.append(SimulatedClient(index: index, api: users[index], probe: probe, connections: connections))
            }
            let goal = clients.count
            try await waitUntil(.seconds(60), "clients \(start)..<\(goal) did not connect (\(connections.value) sockets)") {
                connections.value >= goal && probe.arrived >= goal && (socketsOpen() ?? goal) >= goal
            }
        }
        return ClientFleet(clients: clients, probe: probe)
    }

    private init(clients: [SimulatedClient], probe: FanOutProbe) {
        self.clients = Mutex(clients)
        self.probe = probe
    }

    /// Ends the subscribers and releases the resources, which closes their sockets.
    func stop() {
        let clients = self.clients.withLock { clients in
            defer { clients = [] }
            return clients
        }
        for client in clients { client.stop() }
    }
}

extension FanOutProbe {
    /// How many clients have the expected version.
    var arrived: Int {
        state.withLock { $0.latencies.count }
    }
}
