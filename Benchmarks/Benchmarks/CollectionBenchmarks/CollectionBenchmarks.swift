import Benchmark
import BenchmarkSupport
import Foundation

// Entry point found by the BenchmarkPlugin boilerplate: StateLoopCollections on 100,000 rows
// (`swift package benchmark --target CollectionBenchmarks`).
let benchmarks: @Sendable () -> Void = {
    // The same executable, started by the fan-out benchmark, is its server process.
    if ProcessInfo.processInfo.environment[CollectionFanOutServer.roleVariable] != nil {
        CollectionFanOutServer.runAsServer()
    }
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal, .peakMemoryResident],
        warmupIterations: 1,
        scalingFactor: .one,
        maxDuration: .seconds(20),
        maxIterations: 1_000
    )
    registerLiveQueryBenchmarks()
    registerColdStartBenchmarks()
    registerFirstSyncBenchmarks()
    registerFanOutBenchmarks()
}
