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
/// the device's alone. A third variant's live query is a screen's: the first 100 rows, on
/// screen with the first page; its round ends when the last page is in and the subscription's
/// socket is open (it polls the status every millisecond).
func registerFirstSyncBenchmarks() {
    for variant in FirstSyncFixture.Variant.allCases {
        let box = FixtureBox<FirstSyncFixture>()
        Benchmark(
            variant.name,
            configuration: .init(maxDuration: .seconds(30), maxIterations: 20),
            closure: { benchmark, fixture in
                do {
                    try await fixture.round(benchmark, variant)
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
    enum Variant: CaseIterable {
        case whole, screen, value

        var name: String {
            switch self {
            case .whole: "Collections: first sync of 100,000 rows into an empty local store"
            case .screen: "Collections: first sync of 100,000 rows into an empty local store, a screen of the first 100 live"
            case .value: "Collections: first sync of 100,000 rows, baseline: one value of the whole list, GET and decode"
            }
        }
    }

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

    func round(_ benchmark: Benchmark, _ variant: Variant) async throws {
        if variant == .value {
            benchmark.startMeasurement()
            let value: Versioned<[TaskRow]> = try await endpoint.get("/board")
            benchmark.stopMeasurement()
            if value.value.count != 100_000 { benchmark.error("got \(value.value.count) rows") }
            return
        }
        let path = folder.appendingPathComponent("\(UUID().uuidString).sqlite").path
        let store = try LocalStore(path: path)
        let tasks = store.collection(TaskRow.collection, mutations: NoMutation.self)
        let expected = variant == .screen ? 100 : 100_000
        let live = tasks.live(RowQuery(orderedBy: [.init("position")], limit: variant == .screen ? 100 : nil))
        benchmark.startMeasurement()
        let subscription = tasks.subscribe(endpoint.rows(at: "/tasks", query: "all", as: TaskRow.self))
        for await rows in live.updates() where rows.count == expected { break }
        // A screen's 100 come with the first page: the sync is done once the last page is in
        // and the socket opened from the cookie it set.
        while variant == .screen, subscription.status != .live { try await Task.sleep(for: .milliseconds(1)) }
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
