// swift-tools-version: 6.2
import PackageDescription

// Nightride, the ride-sharing app that proves StateLoop: a package of its own that depends on
// the library by path, so that the compiler holds it to the library's public API.
let package = Package(
    name: "Nightride",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "nightride", targets: ["nightride"]),
        .executable(name: "nightride-simulate", targets: ["nightride-simulate"]),
        // The server and clients, as products so that the benchmarks can load them.
        .library(name: "NightrideModel", targets: ["NightrideModel"]),
        .library(name: "NightrideServer", targets: ["NightrideServer"]),
        .library(name: "NightrideHarness", targets: ["NightrideHarness"]),
        .library(name: "NightrideClient", targets: ["NightrideClient"]),
    ],
    // PostgreSQL is optional: the demo, the terminal client and a server on a SQLite file do not
    // need it, and leaving it out spares a first build about 720 compile steps (postgres-nio and
    // the copy of BoringSSL its authentication links).
    traits: [
        .trait(
            name: "PostgreSQL",
            description: "`--postgres` and DATABASE_URL: the server's data in a PostgreSQL database, shared by several instances."
        ),
        .default(enabledTraits: []),
    ],
    dependencies: [
        // Named, because a path dependency's identity is its folder's name, which differs
        // between clones.
        .package(name: "StateLoop", path: ".."),
        // The library's own minimum versions, for what Nightride imports directly.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        // Password digests (bcrypt), for Nightride's accounts: the library does not need it.
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.81.0"),
        // The server's settings from the environment and a JSON file, besides its flags.
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.5.0"),
    ],
    targets: [
        .target(name: "NightrideModel"),
        .target(
            name: "NightrideServer",
            dependencies: [
                "NightrideModel",
                // The kit: resources, pushes, mutations, sessions, the store and its host.
                .product(name: "StateLoopServer", package: "StateLoop"),
                // Its half of the inspector's timeline, when asked for (`--inspect`).
                .product(name: "StateLoopInspector", package: "StateLoop"),
                .product(name: "StateLoopInspectorSyncServer", package: "StateLoop"),
                .product(name: "StateLoopServerPostgres", package: "StateLoop", condition: .when(traits: ["PostgreSQL"])),
                .product(name: "StateLoopWire", package: "StateLoop"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // What watches and disturbs a server in the demo, the chaos runs and the tests: faults,
        // counters and the truth read from the store's change feed.
        .target(
            name: "NightrideHarness",
            dependencies: [
                "NightrideServer", "NightrideModel",
                .product(name: "StateLoopServer", package: "StateLoop"),
                .product(name: "StateLoopServerPostgres", package: "StateLoop", condition: .when(traits: ["PostgreSQL"])),
                // The fault plan's hooks into the pushes.
                .product(name: "StateLoopServerTesting", package: "StateLoop"),
                .product(name: "StateLoopWire", package: "StateLoop"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "NightrideClient",
            dependencies: [
                "NightrideModel",
                .product(name: "StateLoop", package: "StateLoop"),
                .product(name: "StateLoopSync", package: "StateLoop"),
                .product(name: "StateLoopWire", package: "StateLoop"),
                .product(name: "StateLoopSyncTransports", package: "StateLoop"),
                .product(name: "StateLoopJournal", package: "StateLoop"),
                .product(name: "StateLoopInspector", package: "StateLoop"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "NightrideDemo",
            dependencies: [
                "NightrideClient", "NightrideServer", "NightrideHarness", "NightrideModel",
                .product(name: "StateLoop", package: "StateLoop"),
                .product(name: "StateLoopSync", package: "StateLoop"),
                .product(name: "StateLoopInspector", package: "StateLoop"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "NightrideTUI",
            dependencies: [
                "NightrideClient", "NightrideModel",
                .product(name: "StateLoop", package: "StateLoop"),
                .product(name: "StateLoopSync", package: "StateLoop"),
                .product(name: "StateLoopViewModel", package: "StateLoop"),
            ]
        ),
        .executableTarget(
            name: "nightride",
            dependencies: [
                "NightrideModel", "NightrideServer", "NightrideHarness", "NightrideClient", "NightrideDemo", "NightrideTUI",
                .product(name: "StateLoopSync", package: "StateLoop"),
                .product(name: "StateLoopInspector", package: "StateLoop"),
                .product(name: "StateLoopServerPostgres", package: "StateLoop", condition: .when(traits: ["PostgreSQL"])),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // The library's test helpers (throwaway PostgreSQL, child processes, bounded waits) and
        // the inspector's page in headless Chromium: shared with the library's tests through
        // links to their folders, not products.
        // Nightride's server and clients in one deterministic simulation.
        .executableTarget(
            name: "nightride-simulate",
            dependencies: [
                "NightrideModel", "NightrideServer", "NightrideClient",
                .product(name: "StateLoop", package: "StateLoop"),
                .product(name: "StateLoopSync", package: "StateLoop"),
                .product(name: "StateLoopSyncTransports", package: "StateLoop"),
                .product(name: "StateLoopServerTesting", package: "StateLoop"),
                .product(name: "StateLoopSimulation", package: "StateLoop"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(name: "TestSupport", dependencies: [.product(name: "Logging", package: "swift-log")], path: "Tests/Support/TestSupport"),
        .target(
            name: "InspectorTestSupport",
            dependencies: [
                .product(name: "StateLoopInspectorWire", package: "StateLoop"),
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/Support/InspectorTestSupport"
        ),
        .testTarget(
            name: "NightrideDemoTests",
            dependencies: [
                "NightrideDemo", "NightrideClient", "NightrideServer", "NightrideHarness", "NightrideModel", "TestSupport", "InspectorTestSupport",
                // Run as a child process by SimulateTests: a simulation takes the whole process.
                "nightride-simulate",
                .product(name: "StateLoop", package: "StateLoop"),
                .product(name: "StateLoopSync", package: "StateLoop"),
                .product(name: "StateLoopJournal", package: "StateLoop"),
                .product(name: "StateLoopInspector", package: "StateLoop"),
                .product(name: "StateLoopInspectorWire", package: "StateLoop"),
                .product(name: "StateLoopInspectorServer", package: "StateLoop"),
                .product(name: "StateLoopTesting", package: "StateLoop"),
                .product(name: "StateLoopServer", package: "StateLoop"),
                .product(name: "StateLoopServerPostgres", package: "StateLoop", condition: .when(traits: ["PostgreSQL"])),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The recorded sessions' fixtures, read through #filePath.
            exclude: ["RecordedSessions/Sessions"]
        ),
        .testTarget(
            name: "NightrideServerTests",
            dependencies: [
                "NightrideServer", "NightrideHarness",
                // For DriverModeChange's Mutation conformance, which is the client's.
                "NightrideClient",
                "NightrideModel",
                "TestSupport",
                .product(name: "StateLoopSync", package: "StateLoop"),
                .product(name: "StateLoopSyncTransports", package: "StateLoop"),
                .product(name: "StateLoopTesting", package: "StateLoop"),
                .product(name: "StateLoopServer", package: "StateLoop"),
                .product(name: "StateLoopServerTesting", package: "StateLoop"),
                .product(name: "StateLoopWire", package: "StateLoop"),
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "NightrideTUITests",
            dependencies: [
                "NightrideTUI", "NightrideClient", "NightrideModel", "NightrideServer", "NightrideHarness", "TestSupport",
                .product(name: "StateLoopSync", package: "StateLoop"),
                .product(name: "StateLoopViewModel", package: "StateLoop"),
                .product(name: "Logging", package: "swift-log"),
                // Built beside the tests, which drive it in tmux.
                "nightride",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// CI builds with every warning an error (STATELOOP_WARNINGS_AS_ERRORS=1, as `.ci/run` sets it).
if Context.environment["STATELOOP_WARNINGS_AS_ERRORS"] == "1" {
    for target in package.targets {
        target.swiftSettings = (target.swiftSettings ?? []) + [.treatAllWarnings(as: .error)]
    }
}
