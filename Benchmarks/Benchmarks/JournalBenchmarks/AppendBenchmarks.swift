import Benchmark
import BenchmarkSupport
import StateLoop
@_spi(Benchmarks) import StateLoopJournal

/// Events appended per second by a journaled system, durable (`JournalDurability.processCrash`,
/// the default: every commit is in the operating system's hands before `send` returns).
///
/// Every benchmark opens a fresh journal in a new temporary folder in its `setup`, keeps
/// appending to it for all its iterations, and removes it in `teardown`. An iteration appends
/// `scaledIterations.count` events. With `--scale`, the tool's throughput row then reads as
/// events per second, but it counts whole iterations per second: for iterations longer than a
/// second (the bursts) it is 0 and not printed, so events per second come from the wall clock.
func registerAppendBenchmarks() {
    let snapshotSettings: [(name: String, interval: Int?)] = [
        ("snapshots every 1,000", 1_000),
        ("snapshots off", nil),
    ]

    // One event per send: one transaction, and so one commit, per event. An iteration is 1,000
    // sends (about 15 ms), and up to 1,000 iterations are taken.
    for setting in snapshotSettings {
        let box = FixtureBox<AppendFixture>()
        Benchmark(
            "Journal: append, 1 event per send, \(setting.name)",
            configuration: .init(
                scalingFactor: .kilo,
                maxDuration: .seconds(10),
                maxIterations: 1_000
            ),
            closure: { benchmark, fixture in
                await fixture.sendOneByOne(benchmark.scaledIterations.count)
            },
            setup: { try await box.set(AppendFixture(snapshotInterval: setting.interval)) },
            teardown: { await box.take()?.close() }
        )
    }

    // Bursts: `send(contentsOf:)` of 100 or 1,000 events, one transaction each. An iteration
    // is 1,000,000 events (10,000 or 1,000 bursts), long enough to hold several WAL
    // checkpoints and, with snapshots on, a snapshot every 1,000 events. Each beside the
    // baseline: the same JSON stored one row per event, coded one at a time, as before rows.
    for burst in [(size: 100, name: "100"), (size: 1_000, name: "1,000")] {
        for setting in snapshotSettings {
            for layout in StorageLayout.allCases {
                let box = FixtureBox<AppendFixture>()
                Benchmark(
                    "Journal: append, bursts of \(burst.name), \(setting.name)\(layout.suffix)",
                    configuration: .init(
                        metrics: withCPUTime(Benchmark.defaultConfiguration.metrics),
                        scalingFactor: .mega,
                        maxDuration: .seconds(30)
                    ),
                    closure: { benchmark, fixture in
                        await fixture.sendBursts(events: benchmark.scaledIterations.count)
                    },
                    setup: {
                        try await box.set(
                            AppendFixture(snapshotInterval: setting.interval, burst: burst.size, layout: layout)
                        )
                    },
                    teardown: { await box.take()?.close() }
                )
            }
        }
    }
}

/// How the events are stored: rows of up to 512 events, each one JSON array coded at once
/// (today), or each event alone in its row (the baseline: format 1's layout and coding).
enum StorageLayout: CaseIterable, Sendable {
    case rows
    case rowPerEvent

    /// What a benchmark's name says of the layout: nothing for today's.
    var suffix: String {
        switch self {
        case .rows: ""
        case .rowPerEvent: ", baseline: a row per event"
        }
    }

    func configuration(snapshotInterval: Int?) -> JournalConfiguration {
        var configuration = JournalConfiguration(snapshotInterval: snapshotInterval)
        if self == .rowPerEvent { configuration.rowCapacity = 1 }
        return configuration
    }
}

/// A journaled system on a fresh journal file.
@JournalActor
final class AppendFixture {
    private let folder: TemporaryFolder
    private let journal: Journal<Tally, TallyEvent>
    private let system: System<Tally, TallyEvent>
    /// The events 0 to 999 cut into bursts, built here, outside the measurement, as an app has
    /// its burst in hand. The payloads are those of the one-by-one benchmark.
    private let bursts: [[TallyEvent]]
    private var sent = 0

    init(snapshotInterval: Int?, burst: Int = 1, layout: StorageLayout = .rows) throws {
        precondition(1_000 % burst == 0, "a burst size must divide 1,000")
        bursts = stride(from: 0, to: 1_000, by: burst).map { start in
            (start..<start + burst).map(TallyEvent.numbered)
        }
        folder = try TemporaryFolder()
        journal = try Journal(at: folder.journal, configuration: layout.configuration(snapshotInterval: snapshotInterval))
        system = System(journal: journal, initialState: Tally(), reduce: Tally.reduce)
    }

    /// Sends `count` events, one `send` each.
    func sendOneByOne(_ count: Int) {
        for index in sent..<sent + count {
            system.send(.numbered(index))
        }
        sent += count
        check()
    }

    /// Sends `count` events in the bursts built by `init`, one `send(contentsOf:)` each.
    func sendBursts(events count: Int) {
        let size = bursts[0].count
        precondition(count.isMultiple(of: size), "an iteration must be whole bursts")
        for index in 0..<count / size {
            system.send(contentsOf: bursts[index % bursts.count])
        }
        sent += count
        check()
    }

    /// Guards against a benchmark that silently stopped doing the work it claims to measure:
    /// every event reduced, and committed without an error.
    private func check() {
        precondition(system.state.count == sent, "an event was not reduced")
        let health = journal.health
        precondition(health.lastError == nil, "a write failed")
        precondition(health.durableSequence == Int64(sent), "events were not committed")
    }

    func close() {
        system.stop()
        journal.close()
        folder.remove()
    }
}
