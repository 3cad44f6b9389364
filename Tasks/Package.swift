// swift-tools-version: 6.2
import PackageDescription

// Tasks, a team task board on StateLoop's collections: a package of its own that depends on the
// library by path, so that the compiler holds it to the library's public API, as Nightride is.
let package = Package(
    name: "Tasks",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "tasks", targets: ["tasks"]),
        .executable(name: "tasks-simulate", targets: ["tasks-simulate"]),
        .library(name: "TasksModel", targets: ["TasksModel"]),
        .library(name: "TasksServer", targets: ["TasksServer"]),
        .library(name: "TasksClient", targets: ["TasksClient"]),
    ],
    dependencies: [
        // Named, because a path dependency's identity is its folder's name, which differs
        // between clones.
        .package(name: "StateLoop", path: ".."),
        // The library's own minimum versions, for what Tasks imports directly.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
    ],
    targets: [
        // What both sides share: the rows, the collections, the mutations.
        .target(name: "TasksModel", dependencies: [.product(name: "StateLoopWire", package: "StateLoop")]),
        .target(
            name: "TasksServer",
            dependencies: [
                "TasksModel",
                .product(name: "StateLoopServer", package: "StateLoop"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "TasksClient",
            dependencies: [
                "TasksModel",
                .product(name: "StateLoop", package: "StateLoop"),
                .product(name: "StateLoopCollections", package: "StateLoop"),
                .product(name: "StateLoopSync", package: "StateLoop"),
                .product(name: "StateLoopSyncTransports", package: "StateLoop"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The terminal client: a pure core (state, keys, frames) and the thin host that
        // takes over the terminal.
        .target(
            name: "TasksTerminal",
            dependencies: [
                "TasksModel", "TasksClient",
                .product(name: "StateLoopCollections", package: "StateLoop"),
            ]
        ),
        // The demo and the chaos runs: a server and several clients in one process, seeded
        // faults, and the verdict.
        .target(
            name: "TasksDemo",
            dependencies: [
                "TasksModel", "TasksServer", "TasksClient",
                .product(name: "StateLoopServer", package: "StateLoop"),
                .product(name: "StateLoopServerTesting", package: "StateLoop"),
                .product(name: "StateLoopCollections", package: "StateLoop"),
                .product(name: "StateLoopSyncTransports", package: "StateLoop"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "tasks",
            dependencies: [
                "TasksServer", "TasksClient", "TasksDemo", "TasksTerminal",
                .product(name: "StateLoopServer", package: "StateLoop"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Tasks' server and devices in one deterministic simulation (StateLoopSimulation).
        .executableTarget(
            name: "tasks-simulate",
            dependencies: [
                "TasksModel", "TasksServer", "TasksClient", "TasksDemo",
                .product(name: "StateLoopServer", package: "StateLoop"),
                .product(name: "StateLoopServerTesting", package: "StateLoop"),
                .product(name: "StateLoopSimulation", package: "StateLoop"),
                .product(name: "StateLoopCollections", package: "StateLoop"),
                .product(name: "StateLoopSync", package: "StateLoop"),
                .product(name: "StateLoopSyncTransports", package: "StateLoop"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The library's test helpers (child processes), shared through a link.
        .target(name: "TestSupport", dependencies: [.product(name: "Logging", package: "swift-log")], path: "Tests/Support/TestSupport"),
        .testTarget(
            name: "TasksTests",
            // `tasks` too: its host test runs the executable on a pseudo-terminal; and
            // `tasks-simulate`, which its simulation test runs.
            dependencies: ["TasksModel", "TasksServer", "TasksClient", "TasksDemo", "TasksTerminal", "tasks", "tasks-simulate", "TestSupport"]
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
