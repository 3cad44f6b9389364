import Benchmark
import BenchmarkSupport
import Foundation

// Entry point found by the BenchmarkPlugin boilerplate: StateLoopServer's mutations per second,
// a target of its own (`swift package benchmark --target ServerBenchmarks`).
//
// Each benchmark runs the kit in this process on loopback, with clients that send numbered
// mutations over HTTP, each waiting for its answer before the next (as StateLoopSync's
// optimistic resources do). An iteration is `scaledIterations.count` mutations shared by the
// clients; with `--scale` the throughput row reads as mutations per second. The durable store
// (fsync per commit) runs beside its baselines in the same run: the same file without the fsync,
// and the store in memory.
let benchmarks: @Sendable () -> Void = {
    // The same executable, started by the broadcast benchmark, is its server process.
    if ProcessInfo.processInfo.environment[BroadcastServer.roleVariable] != nil {
        BroadcastServer.runAsServer()
    }
    registerBroadcastBenchmark()
    // One round: a commit and its push reaching a client's socket; the round's wall-clock time is
    // the latency (quote p50 and p99).
    for acrossInstances in [true, false] {
        let box = FixtureBox<CrossInstanceFixture>()
        Benchmark(
            acrossInstances
                ? "Server: push latency, commit on instance A to a client of instance B (PostgreSQL)"
                : "Server: push latency, baseline: commit on the client's own instance (PostgreSQL)",
            configuration: .init(
                metrics: [.wallClock], warmupIterations: 10, scalingFactor: .one,
                maxDuration: .seconds(profiledRounds == nil ? 20 : 120), maxIterations: profiledRounds ?? 300
            ),
            closure: { benchmark, fixture in
                do {
                    try await fixture.round(acrossInstances: acrossInstances)
                } catch {
                    benchmark.error("\(error)")
                }
            },
            setup: { () async throws -> CrossInstanceFixture in
                let fixture = box.set(try await CrossInstanceFixture.start())
                try await waitForProfiler(toProfile: ProcessInfo.processInfo.processIdentifier)
                return fixture
            },
            teardown: { await box.take()?.stop() }
        )
    }
    // Commits per second on one PostgreSQL database from 1, 2 and 4 instances, each commit
    // notifying the other instances (the store's default) or not (the baseline).
    for instances in [1, 2, 4] {
        for notifies in [true, false] {
            let box = FixtureBox<CommitThroughputFixture>()
            Benchmark(
                "Server: PostgreSQL commits, \(instances) instance\(instances == 1 ? "" : "s"), \(notifies ? "notifying" : "baseline: no NOTIFY")",
                configuration: .init(metrics: [.wallClock, .throughput], scalingFactor: .kilo, maxDuration: .seconds(15), maxIterations: 10),
                closure: { benchmark, fixture in
                    do {
                        try await fixture.commit(benchmark.scaledIterations.count)
                    } catch {
                        benchmark.error("\(error)")
                    }
                },
                setup: { try await box.set(CommitThroughputFixture.start(instances: instances, notifies: notifies)) },
                teardown: { box.take()?.stop() }
            )
        }
    }
    for store in MutationFixture.StoreKind.allCases {
        for clients in [1, 100] {
            let box = FixtureBox<MutationFixture>()
            Benchmark(
                "Server: mutations, \(clients) client\(clients == 1 ? "" : "s"), \(store.name)",
                configuration: .init(
                    metrics: [.wallClock, .throughput, .cpuTotal],
                    scalingFactor: .kilo,
                    maxDuration: .seconds(20),
                    maxIterations: 30
                ),
                closure: { benchmark, fixture in
                    await fixture.mutate(benchmark.scaledIterations.count, clients: clients)
                },
                setup: { try await box.set(MutationFixture.start(store: store)) },
                teardown: { await box.take()?.stop() }
            )
        }
    }
}

/// With `STATELOOP_PROFILE_ROUNDS=N`, the push-latency benchmarks run N rounds (up to 2 minutes)
/// rather than 300, so that a profiler sees more than a second of them.
private let profiledRounds = ProcessInfo.processInfo.environment["STATELOOP_PROFILE_ROUNDS"].flatMap { Int($0) }
