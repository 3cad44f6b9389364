import Benchmark

// Entry point found by the BenchmarkPlugin boilerplate. Every group lives in one target so that
// the StateLoop numbers and the baselines they are compared with come from the same run.
let benchmarks: @Sendable () -> Void = {
    // A benchmark sends `scaledIterations.count` events per iteration: a million by default,
    // so that the harness's own per-iteration cost (see the "Harness" benchmark) vanishes and a
    // malloc count per iteration divided by a million reads as mallocs per event. Run with
    // `--scale` to see those per-iteration totals; without it the tool divides by the scaling
    // factor itself and rounds per-event values to whole numbers.
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal],
        warmupIterations: 2,
        scalingFactor: .mega,
        maxDuration: .seconds(10),
        maxIterations: 100
    )

    registerHarnessBenchmarks()
    registerSystemBenchmarks()
    registerEffectBenchmarks()
    registerViewModelBenchmarks()
    registerBaselineBenchmarks()
    registerSyncBenchmarks()
    registerPushPathBenchmarks()
    registerSyncLoopbackBenchmarks()
    registerOptimisticBenchmarks()
    registerInspectorBenchmarks()
}
