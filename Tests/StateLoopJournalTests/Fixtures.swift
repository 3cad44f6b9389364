import Foundation
import StateLoop

@testable import StateLoopJournal

/// A state whose fold shows every event applied once, in order: the count, the sum and an
/// order-sensitive checksum of the values added.
struct Tally: Codable, Equatable, Sendable {
    var count = 0
    var sum = 0
    var checksum: UInt64 = 14_695_981_039_346_656_037
    var note = ""

    static func reduce(_ state: inout Tally, _ event: TallyEvent) {
        switch event {
        case .add(let value):
            state.count += 1
            state.sum += value
            state.checksum = (state.checksum ^ UInt64(truncatingIfNeeded: value)) &* 1_099_511_628_211
        case .note(let text):
            state.note = text
        case .measure:
            break
        }
    }

    /// The state after adding `values` to an empty tally.
    static func folding(_ values: some Sequence<Int>) -> Tally {
        var state = Tally()
        for value in values {
            reduce(&state, .add(value))
        }
        return state
    }
}

enum TallyEvent: Codable, Equatable, Sendable {
    case add(Int)
    case note(String)
    /// Carries a Double, so that NaN makes it fail to encode as JSON.
    case measure(Double)
}

/// The same events under an incompatible shape, as after an app upgrade without migration.
enum RenamedTallyEvent: Codable, Equatable, Sendable {
    case increment(by: Int)
}

/// The same state with a new required property, as after an app upgrade without migration.
struct GrownTally: Codable, Equatable, Sendable {
    var count = 0
    var sum = 0
    var checksum: UInt64 = 0
    var note = ""
    var unit: String

    static func reduce(_ state: inout GrownTally, _ event: TallyEvent) {}
}

/// A new folder for one test's files, removed when the test ends.
final class TemporaryFolder {
    let path: String

    init() {
        path =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("stateloop-journal-\(UUID().uuidString)").path
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    var journal: String { path + "/tally.journal" }

    func files() -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: path).sorted()) ?? []
    }
}

/// Opens `path`, sends `events` one send each, and closes the journal.
@MainActor
func write(
    _ events: [TallyEvent],
    to path: String,
    configuration: JournalConfiguration = JournalConfiguration(snapshotInterval: nil)
) throws {
    let journal = try Journal<Tally, TallyEvent>(at: path, configuration: configuration)
    let system = System(journal: journal, initialState: Tally(), reduce: Tally.reduce)
    for event in events {
        system.send(event)
    }
    system.stop()
    journal.close()
}

/// The state a fresh system restores from `path`, and what opening found.
@MainActor
func restore(
    _ path: String,
    configuration: JournalConfiguration = JournalConfiguration(snapshotInterval: nil)
) throws -> (Tally, JournalRecovery) {
    let journal = try Journal<Tally, TallyEvent>(at: path, configuration: configuration)
    let system = System(journal: journal, initialState: Tally(), reduce: Tally.reduce)
    defer {
        system.stop()
        journal.close()
    }
    return (system.state, journal.recovery)
}

extension JournalSchema {
    /// The state and the events at `version`, with no migrations.
    static func versions(_ version: Int) -> JournalSchema {
        var schema = JournalSchema()
        schema.setVersion(version, of: .state)
        schema.setVersion(version, of: .events)
        return schema
    }
}
