import Benchmark

/// The cost of one async benchmark iteration that does nothing but hop to `BenchActor` and back.
/// Every other benchmark pays this once per iteration (not per event); it is here so that its
/// mallocs are not mistaken for the system's.
func registerHarnessBenchmarks() {
    Benchmark(
        "Harness: empty iteration on BenchActor",
        configuration: .init(scalingFactor: .one, maxDuration: .seconds(1), maxIterations: 1_000)
    ) { _ in
        await emptyHop()
    }
}

@BenchActor
private func emptyHop() {}
