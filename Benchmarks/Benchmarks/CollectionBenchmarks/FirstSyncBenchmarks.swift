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

/// A first sync over loopback: a device with an empty store (a file) subscribes to a query
/// whose result is 100,000 rows of about 200 bytes, and the round ends when its live query shows
/// them all (the server's read and encoding, the answer, the decoding, the store's write and the
/// live query's first result). Beside it, the same rows as one value (`[TaskRow]`) fetched with a
/// `GET` and decoded: what a value resource of the whole list costs, with nothing stored. The
/// server is a process of its own (``CollectionFanOutServer``), so the peak memory measured is
/// the device's alone.
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
            teardown: { box.take()?.stop() }
        )
    }
}

final class FirstSyncFixture: Sendable {
    let server: ChildServer
    let endpoint: SyncEndpoint
    let folder: URL

    private init(server: ChildServer, endpoint: SyncEndpoint, folder: URL) {
        self.server = server
        self.endpoint = endpoint
        self.folder = folder
    }

    static func start() async throws -> FirstSyncFixture {
        var logger = Logger(label: "collections.benchmark")
        logger.logLevel = .critical
        let server = try ChildServer.launch(role: CollectionFanOutServer.roleVariable)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("first-sync-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return FirstSyncFixture(
            server: server,
            endpoint: SyncEndpoint(
                server: URL(string: "http://127.0.0.1:\(server.port)")!, bearerToken: "reader", logger: logger, maximumResponseBytes: 256 << 20),
            folder: folder)
    }

    func round(_ benchmark: Benchmark, asValue: Bool) async throws {
        if asValue {
            benchmark.startMeasurement()
            let value: Versioned<[TaskRow]> = try await endpoint.get("/board")
            benchmark.stopMeasurement()
            if value.value.count != 100_000 { benchmark.error("got \(value.value.count) rows") }
            return
        }
        let path = folder.appendingPathComponent("\(UUID().uuidString).sqlite").path
        let store = try LocalStore(path: path)
        let tasks = store.collection(TaskRow.collection, mutations: NoMutation.self)
        let live = tasks.live(RowQuery(orderedBy: [.init("position")]))
        benchmark.startMeasurement()
        let subscription = tasks.subscribe(endpoint.rows(at: "/tasks", query: "all", as: TaskRow.self))
        for await rows in live.updates() where rows.count == 100_000 { break }
        benchmark.stopMeasurement()
        subscription.stop()
        live.stop()
        try store.close()
        try? FileManager.default.removeItem(atPath: path)
    }

    func stop() {
        server.stop()
        try? FileManager.default.removeItem(at: folder)
    }
}
