import Benchmark
import BenchmarkSupport
import Foundation
import StateLoopCollections
import StateLoopWire

/// A launch: the store's file opened, its collection, and a live query's first rows from disk,
/// for a screen of the first 100 open tasks of 100,000 rows. Beside it, the same query without
/// its limit: every open task read and decoded, what a screen that shows the whole list pays.
/// The file is in the page cache (written in setup): the disk's own latency is left out.
func registerColdStartBenchmarks() {
    for limit in [100, nil] as [Int?] {
        let box = FixtureBox<ColdStartFixture>()
        Benchmark(
            limit == nil
                ? "Collections: cold start, baseline: all 90,000 open tasks of 100,000 rows from disk"
                : "Collections: cold start, the first 100 open tasks of 100,000 rows from disk",
            configuration: .init(maxDuration: .seconds(20), maxIterations: limit == nil ? 20 : 500),
            closure: { benchmark, fixture in
                do {
                    benchmark.startMeasurement()
                    let store = try LocalStore(path: fixture.path)
                    let tasks = store.collection(TaskRow.collection, mutations: NoMutation.self)
                    var query = TaskRow.open
                    query.limit = limit
                    let live = tasks.live(query)
                    let shown = live.rows.count
                    benchmark.stopMeasurement()
                    live.stop()
                    // As an app quits: the next launch opens the file at once.
                    try store.close()
                    if shown != (limit ?? 90_000) { benchmark.error("shown \(shown) rows") }
                } catch {
                    benchmark.error("\(error)")
                }
            },
            setup: { box.set(try ColdStartFixture()) },
            teardown: { box.take()?.remove() }
        )
    }
}

struct ColdStartFixture: Sendable {
    let folder: URL
    var path: String { folder.appendingPathComponent("tasks.sqlite").path }

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("collections-cold-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let (store, tasks) = try LocalStore.filled(100_000, path: folder.appendingPathComponent("tasks.sqlite").path)
        // The index a live query on these fields asks for, made once as the app's first launch did.
        tasks.live(TaskRow.open).stop()
        try store.close()
    }

    func remove() {
        try? FileManager.default.removeItem(at: folder)
    }
}
