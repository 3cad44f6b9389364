// swift-tools-version: 6.1
import PackageDescription

// A package of its own, so that the library never depends on the benchmark harness.
let package = Package(
    name: "StateLoopBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        // Named, because a path dependency's identity is its folder's name, which differs
        // between clones.
        .package(name: "StateLoop", path: ".."),
        // Naming the traits replaces the default set ("MallocInterposer", "RuntimeInterposer"):
        // malloc counts stay, and on Linux with Swift 6.3 SwiftPM no longer needs the
        // swift-runtime-interposer package, which only the dropped trait uses.
        .package(
            url: "https://github.com/ordo-one/benchmark",
            from: "1.38.1",
            traits: ["MallocInterposer"]
        ),
    ],
    targets: [
        .executableTarget(
            name: "StateLoopBenchmarks",
            dependencies: [
                .product(name: "StateLoop", package: "StateLoop"),
                .product(name: "StateLoopViewModel", package: "StateLoop"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/StateLoopBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
