import Benchmark

// Entry point found by the BenchmarkPlugin boilerplate. Every group lives in one target so that
// the StateLoop numbers and the baselines they are compared with come from the same run.
let benchmarks: @Sendable () -> Void = {
    // Each benchmark sends `scaledIterations.count` events per iteration. With `.mega`, a
    // wall-clock time in milliseconds reads directly as nanoseconds per event, a throughput in
    // iterations per second as millions of events per second, and a malloc count divided by
    // 1,000,000 as mallocs per event. The harness's own per-iteration mallocs (see the
    // "Harness" benchmark) are then spread over a million events and vanish.
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal],
        warmupIterations: 2,
        scalingFactor: .mega,
        maxDuration: .seconds(4),
        maxIterations: 60
    )

    registerHarnessBenchmarks()
    registerSystemBenchmarks()
    registerEffectBenchmarks()
    registerBaselineBenchmarks()
}
