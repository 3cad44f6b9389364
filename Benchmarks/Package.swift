// swift-tools-version: 6.1
import PackageDescription

// A separate package so that the library itself never depends on the benchmark harness.
let package = Package(
    name: "StateLoopBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "StateLoopBenchmarks",
            dependencies: [
                .product(name: "StateLoop", package: "main"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/StateLoopBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
