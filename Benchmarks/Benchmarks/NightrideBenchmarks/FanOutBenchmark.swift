import Benchmark
import BenchmarkSupport
import Foundation
import NightrideClient
import NightrideServer
import StateLoopInspectorServer
import StateLoopSync
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One server-side change that reaches all 1,000 clients: a single `server.update` flips the
/// driver mode of every user, so the server queues one push on each of the 1,000 sockets, and
/// each client's `RemoteResource` merges it and hands it to its `values()` subscriber.
///
/// Three times, in one run: the server as a user runs it (a process of its own, its data in a
/// SQLite file with an fsync per commit); the same server watched by an inspector (its records of
/// each round sent to an inspector in the benchmark's process), whose cost this measures; and the
/// baseline, the server in the clients' process with its data in memory, sharing their cores and
/// their cooperative pool.
func registerFanOutBenchmark() {
    for placement in FanOutFixture.Placement.allCases {
        let box = FixtureBox<FanOutFixture>()
        Benchmark(
            "Nightride: push fan-out to 1,000 clients, \(placement.name)",
            configuration: .init(
                metrics: [.wallClock, .pushLatency, .roundMedian, .roundP99, .serverUpdate]
                    + (placement == .clientsProcess ? [.processPerClient] : []),
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
            setup: { box.set(try await FanOutFixture.make(placement)) },
            teardown: { await box.take()?.stop() }
        )
    }
}

/// The server and 1,000 connected clients, built once before the rounds.
final class FanOutFixture: Sendable {
    /// Where the server runs.
    enum Placement: CaseIterable {
        /// In a process of its own, its data in a file with an fsync per commit: as users run it.
        case ownProcess
        /// The same, its activity reported to an inspector (StateLoopInspectorSyncServer).
        case ownProcessInspected
        /// In the clients' process, its data in memory (the baseline).
        case clientsProcess

        var name: String {
            switch self {
            case .ownProcess: "server in its own process, durable file"
            case .ownProcessInspected: "server in its own process, durable file, watched by an inspector"
            case .clientsProcess: "server in the clients' process, in memory (baseline)"
            }
        }
    }

    /// The server: in this process, or a child process with its data folder (and the inspector
    /// it reports to, in this process).
    enum Server: Sendable {
        case here(NightrideServer)
        case child(ChildServer, folder: URL, inspector: InspectorServer?)
    }

    let placement: Placement
    let server: Server
    let users: [String]
    let fleet: ClientFleet
    /// Resident memory before the server started and once every client was connected.
    let residentBefore: Int
    let residentAfter: Int
    /// Every user's driver mode and its version's counter, the same for all: set by the rounds.
    private let current = Mutex((on: false, counter: UInt64(1)))
    /// The measured rounds (not the warm-up ones): how long `server.update` took, and the latencies.
    private let measured = Mutex<[(update: Duration, latencies: [Duration])]>([])
    /// The server process's CPU time (user and system, in clock ticks) when the measured rounds
    /// began: what it spent in them is less noisy than any latency on 2 shared cores.
    private let cpuAtFirstRound = Mutex<Int?>(nil)

    private init(placement: Placement, server: Server, users: [String], fleet: ClientFleet, residentBefore: Int, residentAfter: Int) {
        self.placement = placement
        self.server = server
        self.users = users
        self.fleet = fleet
        self.residentBefore = residentBefore
        self.residentAfter = residentAfter
    }

    static func make(_ placement: Placement) async throws -> FanOutFixture {
        let residentBefore = residentBytes()
        let server: Server
        let url: URL
        switch placement {
        case .clientsProcess:
            let here = NightrideServer(configuration: .benchmark, logger: .quiet)
            url = URL(string: "http://127.0.0.1:\(try await here.start())")!
            server = .here(here)
        case .ownProcess, .ownProcessInspected:
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nightride-fan-out-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            var inspector: InspectorServer?
            if placement == .ownProcessInspected {
                let started = try InspectorServer(configuration: .init(port: 0, recordsPerApp: 200_000), logger: .quiet)
                try await started.start()
                inspector = started
            }
            let child = try NightrideChild.launch(dataPath: folder.appendingPathComponent("server.sqlite").path, inspector: inspector?.appURL)
            url = child.url
            server = .child(child, folder: folder, inspector: inspector)
        }
        do {
            let users = try await logIn(count: clientCount, server: url)
            let fleet: ClientFleet
            if case .here(let here) = server {
                fleet = try await ClientFleet.connect(users) { here.openSockets }
            } else {
                fleet = try await ClientFleet.connect(users)
            }
            // Let the last connections' handshakes and pulls finish before reading memory.
            try await Task.sleep(for: .milliseconds(500))
            let residentAfter = residentBytes()
            if placement == .clientsProcess {
                report(
                    "one process, server + \(clientCount) clients: \(residentBefore) B before, \(residentAfter) B connected, "
                        + "+\((residentAfter - residentBefore) / clientCount) B per client"
                )
            }
            return FanOutFixture(
                placement: placement, server: server, users: users.map(\.user), fleet: fleet,
                residentBefore: residentBefore, residentAfter: residentAfter
            )
        } catch {
            await Self.stop(server)
            throw error
        }
    }

    /// Sets every user's driver mode to `on` in one server-side change; returns how long the
    /// change took before its pushes were queued, as the server measured it.
    private func flip(_ on: Bool) async throws -> Duration {
        switch server {
        case .here(let here):
            let start = ContinuousClock.now
            try await here.setDriverModes(on, for: users)
            return start.duration(to: .now)
        case .child(let child, _, _):
            // The child's answer is read on a thread of its own: a blocking read on the
            // cooperative pool would take one of the threads the clients need.
            let answer = try await child.commandOffPool("flip \(on ? "on" : "off") \(users.count)")
            guard answer.hasPrefix("done "), let micros = Int64(answer.dropFirst(5)) else {
                throw SetupFailure(message: "the server process answered \(answer)")
            }
            return .microseconds(micros)
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
        if benchmark.currentIteration == benchmark.configuration.warmupIterations, case .child(let child, _, _) = server {
            cpuAtFirstRound.withLock { $0 = cpuTicks(of: child.processIdentifier) }
        }
        let start = ContinuousClock.now
        fleet.probe.expect(Int(counter), from: start)
        let update = try await flip(on)
        let latencies = try await fleet.probe.wait(orFailAfter: .seconds(30)).sorted()
        for latency in latencies {
            benchmark.measurement(.pushLatency, latency.microseconds)
        }
        benchmark.measurement(.roundMedian, percentile(0.5, of: latencies).microseconds)
        benchmark.measurement(.roundP99, percentile(0.99, of: latencies).microseconds)
        benchmark.measurement(.serverUpdate, update.microseconds)
        if placement == .clientsProcess {
            // The same figure every round: it is measured once, in setup.
            benchmark.measurement(.processPerClient, (residentAfter - residentBefore) / clientCount)
        }
        if benchmark.currentIteration >= benchmark.configuration.warmupIterations {
            measured.withLock { $0.append((update: update, latencies: latencies)) }
        }
    }

    func stop() async {
        let rounds = measured.withLock { $0 }
        if !rounds.isEmpty {
            let all = rounds.flatMap(\.latencies).sorted()
            let medians = rounds.map { percentile(0.5, of: $0.latencies) }.sorted()
            let updates = rounds.map(\.update).sorted()
            let p99s = rounds.map { percentile(0.99, of: $0.latencies) }.sorted()
            report(
                "\(placement.name): \(rounds.count) rounds, \(all.count) latencies: p50 \(percentile(0.5, of: all).microseconds) µs, "
                    + "p90 \(percentile(0.9, of: all).microseconds) µs, p99 \(percentile(0.99, of: all).microseconds) µs, "
                    + "max \(all.last!.microseconds) µs; round p50s from \(medians.first!.microseconds) to \(medians.last!.microseconds) µs, "
                    + "round p99s from \(p99s.first!.microseconds) to \(p99s.last!.microseconds) µs; "
                    + "server.update p50 \(percentile(0.5, of: updates).microseconds) µs"
            )
        }
        if case .child(let child, _, let inspector) = server, let first = cpuAtFirstRound.withLock({ $0 }),
            let now = cpuTicks(of: child.processIdentifier),
            !rounds.isEmpty
        {
            let perRound = Double(now - first) * 1_000 / Double(sysconf(Int32(_SC_CLK_TCK))) / Double(rounds.count)
            report("\(placement.name): the server process's CPU per round \(String(format: "%.1f", perRound)) ms")
            if let inspector {
                report("\(placement.name): the inspector holds \(await Self.recordsHeld(by: inspector)) of the server's records")
            }
        }
        fleet.stop()
        await Self.stop(server)
    }

    /// The user and system CPU time of process `pid` so far, in clock ticks (`/proc/<pid>/stat`).
    private func cpuTicks(of pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let end = text.lastIndex(of: ")") else { return nil }
        // After the command's closing parenthesis: state is field 3, utime 14, stime 15.
        let fields = text[text.index(after: end)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return user + system
    }

    /// How many records the inspector lists for its apps (`GET /apps`): proof that the server's
    /// reports reached it.
    private static func recordsHeld(by inspector: InspectorServer) async -> String {
        guard let port = inspector.port, let url = URL(string: "http://127.0.0.1:\(port)/apps?token=\(inspector.configuration.token)"),
            let (data, _) = try? await URLSession.shared.data(from: url),
            let apps = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]]
        else { return "an unknown number" }
        return "\(apps.compactMap { $0["records"] as? Int }.reduce(0, +))"
    }

    private static func stop(_ server: Server) async {
        switch server {
        case .here(let here):
            await here.stop()
        case .child(let child, let folder, let inspector):
            child.stop()
            try? FileManager.default.removeItem(at: folder)
            await inspector?.stop()
        }
    }
}
