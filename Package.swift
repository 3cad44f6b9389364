// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "StateLoop",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "StateLoop", targets: ["StateLoop"]),
        .library(name: "StateLoopTesting", targets: ["StateLoopTesting"]),
        .library(name: "StateLoopViewModel", targets: ["StateLoopViewModel"]),
        .library(name: "StateLoopWire", targets: ["StateLoopWire"]),
        .library(name: "StateLoopSync", targets: ["StateLoopSync"]),
        .library(name: "StateLoopSyncTransports", targets: ["StateLoopSyncTransports"]),
        .library(name: "StateLoopLogging", targets: ["StateLoopLogging"]),
        .library(name: "StateLoopJournal", targets: ["StateLoopJournal"]),
        .library(name: "StateLoopCollections", targets: ["StateLoopCollections"]),
        .library(name: "StateLoopInspector", targets: ["StateLoopInspector"]),
        .library(name: "StateLoopInspectorWire", targets: ["StateLoopInspectorWire"]),
        .library(name: "StateLoopInspectorServer", targets: ["StateLoopInspectorServer"]),
        .library(name: "StateLoopInspectorJournal", targets: ["StateLoopInspectorJournal"]),
        .library(name: "StateLoopInspectorCollections", targets: ["StateLoopInspectorCollections"]),
        .library(name: "StateLoopInspectorSyncServer", targets: ["StateLoopInspectorSyncServer"]),
        .executable(name: "stateloop-inspector", targets: ["stateloop-inspector"]),
        .library(name: "StateLoopServer", targets: ["StateLoopServer"]),
        .library(name: "StateLoopServerPostgres", targets: ["StateLoopServerPostgres"]),
        .library(name: "StateLoopServerTesting", targets: ["StateLoopServerTesting"]),
        .library(name: "StateLoopSimulation", targets: ["StateLoopSimulation"]),
        .executable(name: "stateloop-simulate", targets: ["stateloop-simulate"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-async-algorithms.git", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/pointfreeco/swift-custom-dump.git", from: "1.3.0"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket.git", from: "1.6.0"),
        // HTTP for the client transports: FoundationNetworking's URLSession is unsafe to cancel
        // and crashes around refused connections on Linux (see HTTPExchange).
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.0.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        // NIO directly: the kit's push sockets and connection handling, the transports' own
        // connections (Hummingbird's own dependency).
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.81.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.24.0"),
        // NIOSSL, for the push source's own `wss://` connections (swift-websocket's dependency).
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.5.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.0.0"),
    ],
    targets: [
        .target(
            name: "StateLoop",
            dependencies: [.product(name: "DequeModule", package: "swift-collections")]
        ),
        .target(
            name: "StateLoopTesting",
            dependencies: [
                "StateLoop",
                "StateLoopInspectorWire",
                .product(name: "CustomDump", package: "swift-custom-dump"),
            ]
        ),
        // The inspector's session format, shared by the app side, the inspector and the test
        // kit's replay: nothing else.
        .target(name: "StateLoopInspectorWire"),
        // The app side of the inspector: monitors that record what systems do, redacted.
        .target(
            name: "StateLoopInspector",
            dependencies: [
                "StateLoop", "StateLoopInspectorWire", "StateLoopSync", "StateLoopWire",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The inspector's watch of a journal, apart, so that an app inspected without a journal
        // does not link SQLite for it.
        .target(
            name: "StateLoopInspectorJournal",
            dependencies: ["StateLoopInspector", "StateLoopInspectorWire", "StateLoopJournal"]
        ),
        // The inspector's watch of a local collection, apart for the same reason: collections
        // keep their rows in SQLite.
        .target(
            name: "StateLoopInspectorCollections",
            dependencies: ["StateLoopInspector", "StateLoopInspectorWire", "StateLoopCollections"]
        ),
        // The inspector's watch of a sync server: the backend's half of one timeline, apart so
        // that an app links the server kit only where it runs one.
        .target(
            name: "StateLoopInspectorSyncServer",
            dependencies: ["StateLoopInspector", "StateLoopInspectorWire", "StateLoopServer"]
        ),
        // The inspector itself: a Hummingbird server that apps send sessions to and that
        // serves the page (plain HTML, CSS and JavaScript, shipped as resources).
        .target(
            name: "StateLoopInspectorServer",
            dependencies: [
                "StateLoopInspectorWire",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                // The upgrade gate: it sits in the connection's pipeline, before Hummingbird's
                // upgrade handler, so that a refused upgrade gets its own status.
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            resources: [.copy("Resources")]
        ),
        .executableTarget(
            name: "stateloop-inspector",
            dependencies: [
                "StateLoopInspectorServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "StateLoopViewModel",
            dependencies: ["StateLoop"]
        ),
        // The protocol both sides share, and nothing else: what a server links.
        .target(name: "StateLoopWire"),
        .target(
            name: "StateLoopSync",
            dependencies: ["StateLoop", "StateLoopWire", .product(name: "AsyncAlgorithms", package: "swift-async-algorithms")]
        ),
        .target(
            name: "StateLoopSyncTransports",
            dependencies: [
                "StateLoopSync",
                .product(name: "WSCore", package: "swift-websocket"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "StateLoopLogging",
            dependencies: ["StateLoop", .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "StateLoopJournal",
            dependencies: ["StateLoop", "StateLoopSync", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        // Async code on one thread from one seed: simulated time, every interleaving chosen by
        // the seed, replayed exactly. Foundation only.
        .target(name: "StateLoopSimulation"),
        // Simulated scenarios from the command line: many seeds, or one replayed.
        .executableTarget(
            name: "stateloop-simulate",
            dependencies: [
                "StateLoopSimulation", "StateLoopSync", "StateLoopSyncTransports", "StateLoopServer", "StateLoopServerTesting",
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/StateLoopSimulate"
        ),
        // Collections on the device: the local store of rows (SQLite), live queries and the
        // queue of changes to rows. Apart from StateLoopSync, which links no SQLite.
        .target(
            name: "StateLoopCollections",
            dependencies: [
                "StateLoop", "StateLoopSync", "StateLoopWire", .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C calls, for the statements run once per row of a first sync.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        // What an app's own tests of its server use: the hooks that inflict trouble on pushes, a
        // plain HTTP client, one that answers through the router in process, and a push socket
        // reader.
        .target(
            name: "StateLoopServerTesting",
            dependencies: [
                "StateLoopServer", "StateLoopWire", "StateLoopSyncTransports", "StateLoopSimulation",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The backend half: versioned resources, pushes and idempotent mutations on a store.
        .target(
            name: "StateLoopServer",
            dependencies: [
                "StateLoopWire",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                // Push sockets are upgraded by the kit's own channel (PushUpgradeChannel), on
                // NIO's WebSocket codec, with HTTP/1 left to Hummingbird.
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
            ]
        ),
        // The PostgreSQL store: a product of its own, so that a SQLite server never builds
        // postgres-nio.
        .target(
            name: "StateLoopServerPostgres",
            dependencies: [
                "StateLoopServer",
                "StateLoopWire",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The server tests' app, shared with the process the crash test kills.
        .target(
            name: "ServerTestApp",
            dependencies: ["StateLoopServer", .product(name: "Hummingbird", package: "hummingbird")],
            path: "Tests/Support/ServerTestApp"
        ),
        .executableTarget(
            name: "sync-server-crash-child",
            dependencies: [
                "ServerTestApp", "StateLoopServer", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/Support/SyncServerCrashChild"
        ),
        .testTarget(
            name: "StateLoopServerTests",
            dependencies: [
                "StateLoopServer",
                "StateLoopServerPostgres",
                "StateLoopServerTesting",
                "ServerTestApp",
                "sync-server-crash-child",
                "StateLoopSync",
                "StateLoopSyncTransports",
                // The server watched by an inspector (ServerWatchTests).
                "StateLoopInspector",
                "StateLoopInspectorSyncServer",
                "StateLoopInspectorWire",
                // The test clock, for the sessions' expiries and the timed updates' deadlines.
                "StateLoopTesting",
                "TestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "Logging", package: "swift-log"),
                // PostgreSQL's own errors, which the stalled-database test accepts beside the store's.
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                // A frame encoded once is checked against NIO's own frame decoder.
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]
        ),
        // The README's and the docs' samples, compiled (and the check that the pages show them).
        .testTarget(
            name: "DocSamplesTests",
            dependencies: [
                "StateLoop", "StateLoopTesting", "StateLoopViewModel", "StateLoopSync", "StateLoopSyncTransports", "StateLoopJournal",
                "StateLoopCollections", "StateLoopInspectorCollections", "StateLoopSimulation",
                "StateLoopInspector", "StateLoopInspectorSyncServer", "StateLoopServer", "StateLoopServerPostgres", "StateLoopServerTesting",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "StateLoopJournalTests",
            dependencies: ["StateLoopJournal", "StateLoopSync", "TestSupport", "journal-crash-child"]
        ),
        .executableTarget(
            name: "journal-crash-child",
            dependencies: ["StateLoopJournal", "TestSupport"],
            path: "Tests/Support/JournalCrashChild"
        ),
        // Helpers shared by the test targets and the crash child: not a product.
        .target(
            name: "TestSupport",
            dependencies: [.product(name: "Logging", package: "swift-log")],
            path: "Tests/Support/TestSupport"
        ),
        // The inspector's page socket as tests read it: not a product.
        .target(
            name: "InspectorTestSupport",
            dependencies: [
                "StateLoopInspectorWire", .product(name: "WSClient", package: "swift-websocket"), .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/Support/InspectorTestSupport"
        ),
        .testTarget(
            name: "StateLoopTests",
            dependencies: ["StateLoop", "StateLoopTesting", "StateLoopLogging", "TestSupport"]
        ),
        .testTarget(
            name: "StateLoopInspectorTests",
            dependencies: [
                "StateLoop", "StateLoopInspector", "StateLoopInspectorWire", "StateLoopInspectorServer", "StateLoopTesting", "TestSupport",
                "InspectorTestSupport", "StateLoopSync", "StateLoopWire", "StateLoopJournal", "StateLoopInspectorJournal",
                "StateLoopCollections", "StateLoopInspectorCollections",
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "StateLoopSimulationTests",
            dependencies: ["StateLoopSimulation", "TestSupport", "stateloop-simulate"]
        ),
        .testTarget(
            name: "StateLoopViewModelTests",
            dependencies: ["StateLoopViewModel", "StateLoopTesting", "LoginFeature"]
        ),
        .testTarget(
            name: "StateLoopCollectionsTests",
            dependencies: [
                "StateLoopCollections", "StateLoopSync", "StateLoopWire", "StateLoopTesting", "TestSupport",
                // End to end: the kit's collections over real sockets.
                "StateLoopServer", "StateLoopSyncTransports",
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
        .testTarget(
            name: "StateLoopSyncTests",
            dependencies: ["StateLoopSync", "StateLoopWire", "StateLoopTesting", "TestSupport"]
        ),
        .testTarget(
            name: "StateLoopSyncTransportTests",
            dependencies: [
                "StateLoopSyncTransports",
                // A port bound but not listening (`LoopbackSocket`).
                "TestSupport",
                // The loopback servers' host (`SyncHost`), which stops them gracefully.
                "StateLoopServer",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                // Hostile servers that answer the upgrade wrongly or break the protocol after it.
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]
        ),
        .target(
            name: "LoginFeature",
            dependencies: ["StateLoop", "StateLoopViewModel"],
            path: "Examples/LoginFeature"
        ),
        .executableTarget(
            name: "login-demo",
            dependencies: ["LoginFeature", "StateLoopViewModel"],
            path: "Examples/LoginDemo"
        ),
    ],
    swiftLanguageModes: [.v6]
)

// CI builds with every warning an error (STATELOOP_WARNINGS_AS_ERRORS=1, as `.ci/run` sets it);
// an app that depends on StateLoop never does.
if Context.environment["STATELOOP_WARNINGS_AS_ERRORS"] == "1" {
    for target in package.targets {
        target.swiftSettings = (target.swiftSettings ?? []) + [.treatAllWarnings(as: .error)]
    }
}

// The documentation's build (STATELOOP_DOCS=1, as `.ci/run` sets it for
// `swift package generate-documentation`): the DocC plugin, which no app needs to fetch.
if Context.environment["STATELOOP_DOCS"] == "1" {
    package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"))
}
