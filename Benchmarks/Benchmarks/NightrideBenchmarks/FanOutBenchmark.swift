import Benchmark
import BenchmarkSupport
import Foundation
import NightrideClient
import NightrideServer
import StateLoopSync
import Synchronization

/// One server-side change that reaches all 1,000 clients: a single `server.update` flips the
/// driver mode of every user, so the server queues one push on each of the 1,000 sockets, and
/// each client's `RemoteResource` merges it and hands it to its `values()` subscriber.
func registerFanOutBenchmark() {
    let box = FixtureBox<FanOutFixture>()
    Benchmark(
        "Nightride: push fan-out to 1,000 clients",
        configuration: .init(
            metrics: [.wallClock, .pushLatency, .roundMedian, .roundP99, .serverUpdate, .processPerClient],
            warmupIterations: 3,
            scalingFactor: .one,
            maxDuration: .seconds(60),
            maxIterations: 30
        ),
        closure: { benchmark in
            guard let fixture = box.current else { return }
            do {
                try await fixture.round(benchmark)
            } catch {
                benchmark.error("\(error)")
            }
        },
        setup: { box.set(try await FanOutFixture.make()) },
        teardown: { await box.take()?.stop() }
    )
}

/// The server and 1,000 connected clients in this process, built once before the rounds.
final class FanOutFixture: Sendable {
    let server: NightrideServer
    let users: [String]
    let fleet: ClientFleet
    /// Resident memory before the server started and once every client was connected.
    let residentBefore: Int
    let residentAfter: Int
    /// Every user's driver mode and its version's counter, the same for all: set by the rounds.
    private let current = Mutex((on: false, counter: UInt64(1)))
    /// The measured rounds (not the warm-up ones): how long `server.update` took, and the latencies.
    private let measured = Mutex<[(update: Duration, latencies: [Duration])]>([])

    private init(server: NightrideServer, users: [String], fleet: ClientFleet, residentBefore: Int, residentAfter: Int) {
        self.server = server
        self.users = users
        self.fleet = fleet
        self.residentBefore = residentBefore
        self.residentAfter = residentAfter
    }

    static func make() async throws -> FanOutFixture {
        let residentBefore = residentBytes()
        let server = NightrideServer(configuration: .benchmark, logger: .quiet)
        let port = try await server.start()
        do {
            let users = try await logIn(count: clientCount, server: URL(string: "http://127.0.0.1:\(port)")!)
            let fleet = try await ClientFleet.connect(users) { server.openSockets }
            // Let the last connections' handshakes and pulls finish before reading memory.
            try await Task.sleep(for: .milliseconds(500))
            let residentAfter = residentBytes()
            report(
                "one process, server + \(clientCount) clients: \(residentBefore) B before, \(residentAfter) B connected, "
                    + "+\((residentAfter - residentBefore) / clientCount) B per client; \(server.openSockets) sockets open"
            )
            return FanOutFixture(
                server: server, users: users.map(\.user), fleet: fleet,
                residentBefore: residentBefore, residentAfter: residentAfter
            )
        } catch {
            await server.stop()
            throw error
        }
    }

    /// One round: flips every user's driver mode in one transaction, then waits until every
    /// client's subscriber has the new version.
    func round(_ benchmark: Benchmark) async throws {
        // A new user's driver mode is off, at counter 1; each round flips it.
        let (on, counter) = current.withLock { current in
            current = (!current.on, current.counter + 1)
            return current
        }
        let start = ContinuousClock.now
        fleet.probe.expect(Int(counter), from: start)
        try await server.setDriverModes(on, for: users)
        let updated = ContinuousClock.now
        let latencies = try await fleet.probe.wait(orFailAfter: .seconds(30)).sorted()
        for latency in latencies {
            benchmark.measurement(.pushLatency, latency.microseconds)
        }
        benchmark.measurement(.roundMedian, percentile(0.5, of: latencies).microseconds)
        benchmark.measurement(.roundP99, percentile(0.99, of: latencies).microseconds)
        benchmark.measurement(.serverUpdate, start.duration(to: updated).microseconds)
        // The same figure every round: it is measured once, in setup.
        benchmark.measurement(.processPerClient, (residentAfter - residentBefore) / clientCount)
        if benchmark.currentIteration >= benchmark.configuration.warmupIterations {
            measured.withLock { $0.append((update: start.duration(to: updated), latencies: latencies)) }
        }
    }

    func stop() async {
        let rounds = measured.withLock { $0 }
        if !rounds.isEmpty {
            let all = rounds.flatMap(\.latencies).sorted()
            let medians = rounds.map { percentile(0.5, of: $0.latencies) }.sorted()
            let updates = rounds.map(\.update).sorted()
            report(
                "\(rounds.count) rounds, \(all.count) latencies: p50 \(percentile(0.5, of: all).microseconds) µs, "
                    + "p90 \(percentile(0.9, of: all).microseconds) µs, p99 \(percentile(0.99, of: all).microseconds) µs, "
                    + "max \(all.last!.microseconds) µs; round p50s from \(medians.first!.microseconds) to \(medians.last!.microseconds) µs; "
                    + "server.update p50 \(percentile(0.5, of: updates).microseconds) µs"
            )
        }
        fleet.stop()
        await server.stop()
    }
}
