import Benchmark
import BenchmarkSupport
import Foundation
import StateLoop
@_spi(Benchmarks) import StateLoopJournal

/// The time from opening a journal to a running system with the restored state: `Journal.init`
/// (open the file, check it, read the saved state and decode the events after it) and
/// `System(journal:)` (replay those events through the reducer). What an app pays at launch.
///
/// Each benchmark writes its journal file once, in `setup`, and every iteration opens it, times
/// the restore, then checks the state and closes the journal and the system (outside the
/// measurement) so that the next iteration can take the file's exclusive lock. Opening changes
/// nothing in these files, so every iteration restores the same thing. The file is in the
/// operating system's page cache (it was just written): the numbers leave out reading a cold
/// file from the disk.
func registerRestoreBenchmarks() {
    for events in [(count: 100_000, name: "100,000"), (count: 1_000_000, name: "1,000,000")] {
        // Snapshots every 1,000: written at that interval, so the file holds the state after
        // event `count - 999` and the 999 events after it, the longest tail such a journal
        // has. The restore reads one state and replays 999 events.
        // Snapshots off: written and read with `snapshotInterval: nil`, so every restore
        // replays every event (opened with an interval, the journal would save a snapshot at
        // once and the next restore would be short).
        // Snapshots off is also measured on the baseline layout (a row per event, decoded one
        // at a time), written and read with it.
        let settings: [(name: String, interval: Int?, layout: StorageLayout)] = [
            ("snapshots every 1,000", 1_000, .rows),
            ("snapshots off", nil, .rows),
            ("snapshots off", nil, .rowPerEvent),
        ]
        for setting in settings {
            let box = FixtureBox<JournalFile>()
            Benchmark(
                "Journal: restore \(events.name) events, \(setting.name)\(setting.layout.suffix)",
                configuration: .init(
                    metrics: setting.interval == nil
                        ? withCPUTime(Benchmark.defaultConfiguration.metrics)
                        : Benchmark.defaultConfiguration.metrics,
                    scalingFactor: .one,
                    maxDuration: .seconds(setting.interval == nil ? 30 : 10),
                    maxIterations: 1_000
                ),
                closure: { benchmark, file in
                    benchmark.startMeasurement()
                    let restored = try await RestoredSystem(file)
                    benchmark.stopMeasurement()
                    await restored.checkAndClose(against: file)
                },
                setup: {
                    try await box.set(
                        JournalFile.write(events: events.count, snapshotInterval: setting.interval, layout: setting.layout)
                    )
                },
                teardown: { box.take()?.folder.remove() }
            )
        }
    }
}

/// The restore after a crash beside the one after a clean close (above): the same 1,000,000
/// events without snapshots, but the files are the image a killed process leaves (the clean-close
/// marker cleared, a WAL beside the file), so the open checks every page (`quick_check`), as
/// every open did before the marker. Each iteration puts the image back first, outside the
/// measurement.
func registerCrashRestoreBenchmark() {
    let box = FixtureBox<CrashImage>()
    Benchmark(
        "Journal: restore 1,000,000 events, snapshots off, after a crash (every page checked)",
        configuration: .init(
            metrics: withCPUTime(Benchmark.defaultConfiguration.metrics),
            scalingFactor: .one,
            maxDuration: .seconds(30),
            maxIterations: 1_000
        ),
        closure: { benchmark, image in
            try image.putBack()
            benchmark.startMeasurement()
            let restored = try await RestoredSystem(image.file)
            benchmark.stopMeasurement()
            await restored.checkAndClose(against: image.file)
        },
        setup: {
            try await box.set(CrashImage.make(events: 1_000_000))
        },
        teardown: { box.take()?.file.folder.remove() }
    )
}

/// A journal file and a copy of it as a crash leaves it.
struct CrashImage: Sendable {
    let file: JournalFile

    private var image: String { file.folder.path + "/image" }

    /// Writes the journal, then copies its files while a writer has it open (the marker is
    /// cleared then, and a WAL is beside it), as a killed process would leave them.
    @JournalActor
    static func make(events: Int) throws -> CrashImage {
        let file = try JournalFile.write(events: events, snapshotInterval: nil)
        let crashed = CrashImage(file: file)
        let journal = try Journal<Tally, TallyEvent>(at: file.folder.journal, configuration: file.configuration)
        let manager = FileManager.default
        try manager.copyItem(atPath: file.folder.journal, toPath: crashed.image)
        try manager.copyItem(atPath: file.folder.journal + "-wal", toPath: crashed.image + "-wal")
        journal.close()
        return crashed
    }

    /// Replaces the journal's files with the crash image.
    func putBack() throws {
        let manager = FileManager.default
        for suffix in ["", "-wal", "-shm"] {
            try? manager.removeItem(atPath: file.folder.journal + suffix)
        }
        try manager.copyItem(atPath: image, toPath: file.folder.journal)
        try manager.copyItem(atPath: image + "-wal", toPath: file.folder.journal + "-wal")
    }
}

/// A journal file written for the restore benchmarks, and what restoring it must give.
struct JournalFile: Sendable {
    let folder: TemporaryFolder
    let configuration: JournalConfiguration
    let state: Tally
    let recovery: JournalRecovery

    /// Writes `events` events in bursts of up to 10,000 (one transaction each), leaving
    /// `snapshotInterval - 1` events after the last snapshot when snapshots are on.
    @JournalActor
    static func write(events: Int, snapshotInterval: Int?, layout: StorageLayout = .rows) throws -> JournalFile {
        let folder = try TemporaryFolder()
        let configuration = layout.configuration(snapshotInterval: snapshotInterval)
        let journal = try Journal<Tally, TallyEvent>(
            at: folder.journal,
            configuration: configuration
        )
        let system = System(journal: journal, initialState: Tally(), reduce: Tally.reduce)
        // Every burst of at least `snapshotInterval` events ends with a snapshot; the short
        // last burst does not.
        let tail = snapshotInterval.map { $0 - 1 } ?? 0
        var start = 0
        while start < events {
            let end = start < events - tail ? min(start + 10_000, events - tail) : events
            system.send(contentsOf: (start..<end).map(TallyEvent.numbered))
            start = end
        }
        let state = system.state
        let health = journal.health
        system.stop()
        journal.close()
        precondition(state.count == events, "an event was not reduced")
        precondition(health.lastError == nil, "a write failed")
        precondition(health.durableSequence == Int64(events), "an event was not committed")
        let snapshotSequence = snapshotInterval.map { _ in Int64(events - tail) }
        precondition(health.snapshotSequence == snapshotSequence, "the snapshot is misplaced")
        return JournalFile(
            folder: folder,
            configuration: configuration,
            state: state,
            recovery: .restored(
                snapshotSequence: snapshotSequence,
                replayedEvents: snapshotInterval == nil ? events : tail
            )
        )
    }
}

/// A journal opened and a system created on it: the restore being measured.
@JournalActor
final class RestoredSystem {
    private let journal: Journal<Tally, TallyEvent>
    private let system: System<Tally, TallyEvent>

    init(_ file: JournalFile) throws {
        journal = try Journal(at: file.folder.journal, configuration: file.configuration)
        system = System(journal: journal, initialState: Tally(), reduce: Tally.reduce)
    }

    /// Checks that the restore gave the state that was written, then releases the file.
    func checkAndClose(against file: JournalFile) {
        precondition(
            journal.recovery == file.recovery,
            "the restore found \(journal.recovery), expected \(file.recovery)"
        )
        precondition(system.state == file.state, "the restored state differs from the written one")
        system.stop()
        journal.close()
    }
}
