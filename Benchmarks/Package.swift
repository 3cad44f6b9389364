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
        // The Nightride benchmarks load its server and clients.
        .package(name: "Nightride", path: "../Nightride"),
        // Naming the traits replaces the default set ("MallocInterposer", "RuntimeInterposer"):
        // malloc counts stay, and on Linux with Swift 6.3 SwiftPM no longer needs the
        // swift-runtime-interposer package, which only the dropped trait uses.
        .package(
            url: "https://github.com/ordo-one/benchmark",
            from: "1.38.1",
            traits: ["MallocInterposer"]
        ),
        // The loopback server of the WebSocket latency benchmark, as in the library's
        // transport tests (the same minimum versions as the root package declares).
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.0"),
        // The Nightride benchmarks silence the server's and the clients' logs (the root package's
        // minimum version).
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        // The scale benchmarks' light push sockets (BenchmarkSupport): a WebSocket upgrade and a
        // frame counter on NIO's channels, nothing per socket beyond them (the root package's
        // minimum version).
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.81.0"),
    ],
    targets: [
        // Linux's epoll for the raw socket reader (BenchmarkSupport's RawPushSockets).
        .target(name: "CEpoll", path: "Benchmarks/CEpoll"),
        // What several benchmark targets share.
        .target(
            name: "BenchmarkSupport",
            dependencies: [
                "CEpoll",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            path: "Benchmarks/BenchmarkSupport"
        ),
        .executableTarget(
            name: "StateLoopBenchmarks",
            dependencies: [
                .product(name: "StateLoop", package: "StateLoop"),
                .product(name: "StateLoopViewModel", package: "StateLoop"),
                .product(name: "StateLoopSync", package: "StateLoop"),
                // Named although StateLoopSync depends on it: without it, SwiftPM 6.3 leaves the
                // module out of this package's build plan ("no such module 'StateLoopWire'").
                .product(name: "StateLoopWire", package: "StateLoop"),
                .product(name: "StateLoopSyncTransports", package: "StateLoop"),
                .product(name: "StateLoopInspector", package: "StateLoop"),
                .product(name: "StateLoopInspectorServer", package: "StateLoop"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                // The loopback server's host (`SyncHost`), which stops it gracefully: cancelling
                // it can trap in NIO.
                .product(name: "StateLoopServer", package: "StateLoop"),
                .product(name: "Benchmark", package: "benchmark"),
                "BenchmarkSupport",
            ],
            path: "Benchmarks/StateLoopBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // StateLoopJournal: appends and restores on real SQLite files. A target of its own, so
        // that it runs alone with `swift package benchmark --target JournalBenchmarks`.
        .executableTarget(
            name: "JournalBenchmarks",
            dependencies: [
                .product(name: "StateLoop", package: "StateLoop"),
                .product(name: "StateLoopJournal", package: "StateLoop"),
                .product(name: "Benchmark", package: "benchmark"),
                "BenchmarkSupport",
            ],
            path: "Benchmarks/JournalBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // Nightride: 1,000 simulated clients on one in-process server over loopback (push fan-out
        // latency, server memory per connected client). Runs alone with
        // `swift package benchmark --target NightrideBenchmarks`.
        .executableTarget(
            name: "NightrideBenchmarks",
            dependencies: [
                .product(name: "NightrideServer", package: "Nightride"),
                .product(name: "StateLoopServer", package: "StateLoop"),
                .product(name: "NightrideClient", package: "Nightride"),
                .product(name: "NightrideModel", package: "Nightride"),
                .product(name: "StateLoopInspector", package: "StateLoop"),
                .product(name: "StateLoopInspectorServer", package: "StateLoop"),
                .product(name: "StateLoopSync", package: "StateLoop"),
                .product(name: "StateLoopWire", package: "StateLoop"),
                .product(name: "StateLoopSyncTransports", package: "StateLoop"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Benchmark", package: "benchmark"),
                "BenchmarkSupport",
            ],
            path: "Benchmarks/NightrideBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // StateLoopServer: mutations per second over loopback HTTP with a durable commit, beside
        // the same store without the fsync and in memory, and on PostgreSQL; a push from one
        // instance's commit to another instance's socket. Runs alone with
        // `swift package benchmark --target ServerBenchmarks`.
        .executableTarget(
            name: "ServerBenchmarks",
            dependencies: [
                .product(name: "StateLoopServer", package: "StateLoop"),
                .product(name: "StateLoopServerPostgres", package: "StateLoop"),
                .product(name: "StateLoopSync", package: "StateLoop"),
                .product(name: "StateLoopSyncTransports", package: "StateLoop"),
                .product(name: "StateLoopWire", package: "StateLoop"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Benchmark", package: "benchmark"),
                "BenchmarkSupport",
            ],
            path: "Benchmarks/ServerBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // StateLoopCollections: a live query moved by one row's difference, a cold start from
        // disk, and a first sync of 100,000 rows over loopback, each beside its baseline. Runs
        // alone with `swift package benchmark --target CollectionBenchmarks`.
        .executableTarget(
            name: "CollectionBenchmarks",
            dependencies: [
                .product(name: "StateLoopCollections", package: "StateLoop"),
                .product(name: "StateLoopServer", package: "StateLoop"),
                .product(name: "StateLoopSync", package: "StateLoop"),
                .product(name: "StateLoopSyncTransports", package: "StateLoop"),
                .product(name: "StateLoopWire", package: "StateLoop"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Benchmark", package: "benchmark"),
                "BenchmarkSupport",
            ],
            path: "Benchmarks/CollectionBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
