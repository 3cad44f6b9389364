import Benchmark
import BenchmarkSupport
import Foundation
import Hummingbird
import Logging
import StateLoopCollections
import StateLoopServer
import StateLoopSync
import StateLoopSyncTransports
import StateLoopWire

/// A first sync over loopback: a device with an empty store subscribes to a query whose result
/// is 100,000 rows of about 200 bytes, and the round ends when its live query shows them all
/// (the server's read and encoding, the socket's first message, the decoding, the store's write
/// and the live query's first result). Beside it, the same rows as one value (`[TaskRow]`)
/// fetched with a `GET` and decoded: what a value resource of the whole list costs, with
/// nothing stored. Peak memory is the process's: server and device together.
func registerFirstSyncBenchmarks() {
    for asValue in [false, true] {
        let box = FixtureBox<FirstSyncFixture>()
        Benchmark(
            asValue
                ? "Collections: first sync of 100,000 rows, baseline: one value of the whole list, GET and decode"
                : "Collections: first sync of 100,000 rows into an empty local store",
            configuration: .init(maxDuration: .seconds(30), maxIterations: 20),
            closure: { benchmark, fixture in
                do {
                    try await fixture.round(benchmark, asValue: asValue)
                } catch {
                    benchmark.error("\(error)")
                }
            },
            setup: { box.set(try await FirstSyncFixture.start()) },
            teardown: { await box.take()?.stop() }
        )
    }
}

final class FirstSyncFixture: Sendable {
    struct Rules: AccessPolicy {
        func principal(for request: Request) async throws -> String? { "reader" }
        func id(of user: String) -> String { user }
        func mayRead(_ key: ResourceKey, as user: String) -> Bool { true }
        func mayWrite(_ key: ResourceKey, as user: String) -> Bool { false }
    }

    static let board = ServerResource("board", of: [TaskRow].self)
    static let all = CollectionQuery<String>("all") { _, _, _ in RowQuery(orderedBy: [.init("position")]) }

    let host: SyncHost
    let endpoint: SyncEndpoint

    private init(host: SyncHost, endpoint: SyncEndpoint) {
        self.host = host
        self.endpoint = endpoint
    }

    static func start() async throws -> FirstSyncFixture {
        var logger = Logger(label: "collections.benchmark")
        logger.logLevel = .critical
        let server = SyncServer(store: try SQLiteStore(), access: Rules(), logger: logger)
        server.serve(TaskRow.collection, at: "tasks", queries: [all])
        server.serve(board, at: "board") { _, _ in "all" }
        let rows = (0..<100_000).map(TaskRow.numbered)
        try await server.update { transaction in
            for row in rows { try transaction.write(row, to: TaskRow.collection) }
            try transaction.write(rows, to: board, "all")
        }
        let host = SyncHost(logger: logger) { port in .init(server, application: server.application(port: port)) }
        let port = try await host.start()
        return FirstSyncFixture(
            host: host, endpoint: SyncEndpoint(server: URL(string: "http://127.0.0.1:\(port)")!, logger: logger, maximumResponseBytes: 256 << 20))
    }

    func round(_ benchmark: Benchmark, asValue: Bool) async throws {
        if asValue {
            benchmark.startMeasurement()
            let value: Versioned<[TaskRow]> = try await endpoint.get("/board")
            benchmark.stopMeasurement()
            if value.value.count != 100_000 { benchmark.error("got \(value.value.count) rows") }
            return
        }
        let store = try LocalStore.inMemory()
        let tasks = store.collection(TaskRow.collection, mutations: NoMutation.self)
        let live = tasks.live(RowQuery(orderedBy: [.init("position")]))
        benchmark.startMeasurement()
        let subscription = tasks.subscribe(endpoint.rows(at: "/tasks", query: "all", as: TaskRow.self))
        for await rows in live.updates() where rows.count == 100_000 { break }
        benchmark.stopMeasurement()
        subscription.stop()
        live.stop()
    }

    func stop() async {
        await host.stop()
    }
}
