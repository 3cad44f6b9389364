import Benchmark

// Entry point found by the BenchmarkPlugin boilerplate: the StateLoopJournal benchmarks, a
// target of their own so that they can be run alone
// (`swift package benchmark --target JournalBenchmarks`).
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal],
        warmupIterations: 2,
        maxDuration: .seconds(10),
        maxIterations: 100
    )

    registerAppendBenchmarks()
    registerRestoreBenchmarks()
    registerCrashRestoreBenchmark()
    registerMigrationBenchmarks()
    registerCodingBaselines()
}

/// `metrics` and the process's CPU time, user and system, on every thread. Linux reports it in
/// scheduler ticks (10 ms), so it is only added to benchmarks whose iterations take seconds.
/// Wall-clock time above it is time spent waiting, such as the `fdatasync` of a WAL checkpoint.
func withCPUTime(_ metrics: [BenchmarkMetric]) -> [BenchmarkMetric] {
    metrics + [.cpuTotal]
}
