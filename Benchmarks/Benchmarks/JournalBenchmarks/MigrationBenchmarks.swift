import Benchmark
import BenchmarkSupport
import Foundation
import StateLoop
import StateLoopJournal

/// The launch of a new app version on a journal written by the previous one: `Journal.init`
/// migrates every stored record (one transaction) and reads the result, then `System(journal:)`
/// replays the tail. Each iteration puts the old journal back first, outside the measurement.
///
/// The migration rewrites every record it reaches without changing its meaning (a state field
/// and each event's value are read and written back), so the restored state can be checked
/// against the one that was written; a rename or a dropped field costs the same.
func registerMigrationBenchmarks() {
    let cases: [(name: String, make: @JournalActor @Sendable () throws -> MigrationImage)] = [
        ("a 1 MB state and 1,000 tail events", { try MigrationImage.bigState() }),
        ("1,000,000 events, snapshots off", { try MigrationImage.events(1_000_000) }),
    ]
    for item in cases {
        let box = FixtureBox<MigrationImage>()
        Benchmark(
            "Journal: migrate \(item.name)",
            configuration: .init(
                metrics: withCPUTime(Benchmark.defaultConfiguration.metrics),
                scalingFactor: .one,
                maxDuration: .seconds(30),
                maxIterations: 1_000
            ),
            closure: { benchmark, image in
                try image.putBack()
                benchmark.startMeasurement()
                let migrated = try await MigratedSystem(image)
                benchmark.stopMeasurement()
                await migrated.checkAndClose(against: image)
            },
            setup: { try await box.set(item.make()) },
            teardown: { box.take()?.folder.remove() }
        )
    }
}

/// A state of about 1 MB: a tally and 10,000 lines of 100 characters.
struct Ledger: Codable, Equatable, Sendable {
    var tally = Tally()
    var lines: [String] = []

    static func reduce(_ state: inout Ledger, _ event: LedgerEvent) {
        switch event {
        case .line(let text): state.lines.append(text)
        case .tally(let event): Tally.reduce(&state.tally, event)
        }
    }
}

enum LedgerEvent: Codable, Equatable, Sendable {
    case line(String)
    case tally(TallyEvent)
}

/// A journal written by "version 1", kept aside to be put back before each migration.
struct MigrationImage: Sendable {
    let folder: TemporaryFolder
    let state: Ledger
    let recovery: JournalRecovery

    private var image: String { folder.path + "/image" }

    /// Version 2: every kind one version up, each migration reading and writing back what it
    /// is given.
    static var schema: JournalSchema {
        var schema = JournalSchema()
        schema.migrateState(from: 1) { state in
            let count = state["tally"]?["count"] ?? .integer(0)
            state["tally"]?["count"] = count
        }
        schema.migrateEvents(from: 1) { event in
            guard let (name, values) = event.enumCase, case .object(let fields) = values else { return event }
            return .object([name: .object(fields)])
        }
        return schema
    }

    /// 10,000 lines (saved as one state at the 10,000th event), then 1,000 tally events.
    @JournalActor
    static func bigState() throws -> MigrationImage {
        let line = String(repeating: "x", count: 100)
        let events = (0..<10_000).map { _ in LedgerEvent.line(line) } + (0..<1_000).map { .tally(.numbered($0)) }
        return try write(events, snapshotInterval: 10_000, replayed: 1_000, snapshotSequence: 10_000)
    }

    /// `count` tally events, no snapshot.
    @JournalActor
    static func events(_ count: Int) throws -> MigrationImage {
        try write((0..<count).map { .tally(.numbered($0)) }, snapshotInterval: nil, replayed: count, snapshotSequence: nil)
    }

    @JournalActor
    private static func write(
        _ events: [LedgerEvent], snapshotInterval: Int?, replayed: Int, snapshotSequence: Int64?
    ) throws -> MigrationImage {
        let folder = try TemporaryFolder()
        let journal = try Journal<Ledger, LedgerEvent>(
            at: folder.journal, configuration: JournalConfiguration(snapshotInterval: snapshotInterval)
        )
        let system = System(journal: journal, initialState: Ledger(), reduce: Ledger.reduce)
        var start = 0
        while start < events.count {
            // Bursts that end exactly at the snapshot, as the interval asks.
            let end = min(start + (snapshotInterval ?? 10_000), events.count)
            system.send(contentsOf: events[start..<end])
            start = end
        }
        let state = system.state
        system.stop()
        journal.close()
        precondition(journal.health.snapshotSequence == snapshotSequence, "the snapshot is misplaced")
        try FileManager.default.copyItem(atPath: folder.journal, toPath: folder.path + "/image")
        return MigrationImage(
            folder: folder, state: state,
            recovery: .restored(snapshotSequence: snapshotSequence, replayedEvents: replayed)
        )
    }

    /// Replaces the journal with the version 1 image.
    func putBack() throws {
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: folder.journal + suffix)
        }
        try FileManager.default.copyItem(atPath: image, toPath: folder.journal)
    }
}

/// A journal opened (and migrated) by version 2, and its system.
@JournalActor
final class MigratedSystem {
    private let journal: Journal<Ledger, LedgerEvent>
    private let system: System<Ledger, LedgerEvent>

    init(_ image: MigrationImage) throws {
        journal = try Journal(
            at: image.folder.journal,
            configuration: JournalConfiguration(schema: MigrationImage.schema, snapshotInterval: nil)
        )
        system = System(journal: journal, initialState: Ledger(), reduce: Ledger.reduce)
    }

    func checkAndClose(against image: MigrationImage) {
        precondition(journal.migration != nil, "nothing was migrated")
        precondition(journal.recovery == image.recovery, "the migration found \(journal.recovery)")
        precondition(system.state == image.state, "the migrated state differs from the written one")
        system.stop()
        journal.close()
    }
}
