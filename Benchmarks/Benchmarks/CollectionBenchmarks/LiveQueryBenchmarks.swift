import Benchmark
import BenchmarkSupport
import Foundation
@_spi(Benchmarks) import StateLoopCollections
import StateLoopWire
import Synchronization

/// A live query over 100,000 rows (nine in ten match, sorted by an indexed field) after a
/// difference that moves one row: the store's write, then the result moved by that row. Beside
/// it, the same difference with the query read again whole, as a screen that re-runs its query
/// after every change does; and the write alone, with no live query, the floor.
func registerLiveQueryBenchmarks() {
    for mode in LiveQueryFixture.Mode.allCases {
        let box = FixtureBox<LiveQueryFixture>()
        Benchmark(
            "Collections: one-row difference on 100,000 rows, \(mode.rawValue)",
            configuration: .init(maxDuration: .seconds(mode == .rereadWhole ? 20 : 10), maxIterations: mode == .rereadWhole ? 50 : 2_000),
            closure: { benchmark, fixture in
                do {
                    try fixture.round(benchmark)
                } catch {
                    benchmark.error("\(error)")
                }
            },
            setup: { box.set(try LiveQueryFixture(mode: mode)) },
            teardown: { box.take()?.stop() }
        )
    }
}

final class LiveQueryFixture: Sendable {
    enum Mode: String, CaseIterable, Sendable {
        case live = "live query moved by the row"
        case rereadWhole = "baseline: the query read again whole"
        case writeOnly = "floor: the store's write, no live query"
    }

    let mode: Mode
    let store: LocalStore
    let tasks: LocalCollection<TaskRow, NoMutation>
    let live: LiveQuery<TaskRow>?
    private let position = Mutex<UInt64>(1)

    init(mode: Mode) throws {
        self.mode = mode
        (store, tasks) = try LocalStore.filled(100_000)
        live = mode == .live ? tasks.live(TaskRow.open) : nil
        if let live, live.rows.count != 90_000 { throw SetupFailure(message: "the live query holds \(live.rows.count) rows") }
    }

    /// One difference: a row, taken at random among the open ones, moves to a random place.
    func round(_ benchmark: Benchmark) throws {
        let (held, next, counter) = position.withLock { position in
            defer { position += 1 }
            return ("1.\(position).00000000000000aa", "1.\(position + 1).00000000000000aa", position)
        }
        let index = Int.random(in: 0..<100_000)
        var row = TaskRow.numbered(index)
        row.done = false
        row.position = Int.random(in: 0..<100_000)
        let difference = RowsDifference(
            cookie: next, replace: false, rows: [VersionedRow(id: row.id, version: Version(epoch: 1, counter: counter + 1), value: row)],
            removed: [])
        benchmark.startMeasurement()
        try tasks.apply(difference, requestedWith: held, to: "all")
        if mode == .rereadWhole {
            let whole = tasks.live(TaskRow.open)
            blackHole(whole.rows.count)
            whole.stop()
        }
        benchmark.stopMeasurement()
        // Checked at one round in 50: a walk through the 90,000 rows after each round left the
        // next round's caches cold, which tripled its time (1.1 ms against 0.35 ms).
        if let live, counter % 50 == 0, !live.rows.contains(where: { $0.id == row.id && $0.position == row.position }) {
            benchmark.error("the live query does not show the moved row")
        }
    }

    func stop() {
        live?.stop()
    }
}
