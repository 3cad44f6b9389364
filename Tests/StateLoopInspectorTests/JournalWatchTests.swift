import Foundation
import StateLoop
import StateLoopInspector
import StateLoopInspectorJournal
import StateLoopInspectorWire
import StateLoopJournal
import StateLoopTesting
import TestSupport
import Testing

/// A journal watched by the inspector: what opening it found, its commits as its health
/// changes, and its write failures.
@MainActor
@Suite("inspector: journals", .timeLimit(.minutes(4)))
struct JournalWatchTests {
    struct Tally: Codable, Sendable, Equatable {
        var count = 0

        enum Event: Codable, Sendable, Equatable {
            case add
            /// An event the journal cannot encode: it lives in memory only, and the journal says so.
            case unwritable

            func encode(to encoder: any Encoder) throws {
                guard self == .add else { throw EncodingError.invalidValue(self, .init(codingPath: [], debugDescription: "unwritable")) }
                var container = encoder.singleValueContainer()
                try container.encode("add")
            }

            init(from decoder: any Decoder) throws {
                self = .add
            }
        }

        static func reduce(_ state: inout Tally, _ event: Event) {
            state.count += 1
        }
    }

    @Test("a journaled system's sent events are recorded with where the app sent them, a run of them committed together included")
    func sentFromJournaled() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("inspector-journal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let inspector = Inspector(app: "Tally")
        let monitor = inspector.monitor(named: "tally", of: Tally.self, Tally.Event.self)
        let journal = try Journal<Tally, Tally.Event>(at: folder.appendingPathComponent("tally.journal").path)
        let system = System(journal: journal, initialState: Tally(), reduce: Tally.reduce, monitor: monitor)
        monitor.attach(to: system)
        let line = #line + 1
        system.send(.add)
        let runLine = #line + 1
        system.send(contentsOf: [Tally.Event.add, .add])
        let locations = inspector.session().records.filter { $0.kind == .reduced }.map(\.location)
        let file = "StateLoopInspectorTests/JournalWatchTests.swift"
        #expect(locations == ["\(file):\(line)", "\(file):\(runLine)", "\(file):\(runLine)"])
        system.stop()
    }

    @Test("opening, commits and a write failure are recorded; a journal opened again says it was restored")
    func recoveryCommitsAndFailures() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("inspector-journal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("tally.journal").path

        let clock = TestClock()
        let inspector = Inspector(app: "Tally")
        var journal: Journal<Tally, Tally.Event>? = try Journal<Tally, Tally.Event>(at: path)
        inspector.watch(journal!, named: "tally journal", every: .milliseconds(100), clock: clock)
        var system: System<Tally, Tally.Event>? = System(journal: journal!, initialState: Tally(), reduce: Tally.reduce)
        for _ in 0..<3 { system?.send(.add) }
        system?.send(.unwritable)

        let statuses = {
            inspector.session().records.filter { $0.kind == .journal }.compactMap { record -> [String: JSONValue]? in
                if case .object(let fields)? = record.status { fields } else { nil }
            }
        }
        #expect(statuses().first?["recovery"] == .string("created"))
        #expect(
            await eventually(within: .seconds(10)) { statuses().contains { $0["lastError"].map { "\($0)" }?.contains("unwritable") == true } },
            "the write failure was not recorded: \(statuses())")
        // The sampler sees the commits (four events numbered, the unwritable one in memory
        // only) once the test clock says a tick has passed.
        #expect(await eventually(within: .seconds(10)) { clock.sleeperCount == 1 }, "the sampler never waited on the clock")
        let beforeTick = statuses().count
        await clock.advance(by: .milliseconds(100))
        #expect(await eventually(within: .seconds(10)) { statuses().count > beforeTick }, "no sample after the tick: \(statuses())")
        #expect(statuses().last?["durableSequence"] == .number(4), "\(statuses())")

        system = nil
        journal?.close()
        journal = nil
        let reopened = try Journal<Tally, Tally.Event>(at: path)
        let again = Inspector(app: "Tally")
        again.watch(reopened, named: "tally journal", clock: clock)
        guard case .object(let opened)? = again.session().records.first(where: { $0.kind == .journal })?.status else {
            Issue.record("no journal record after reopening")
            return
        }
        #expect(opened["recovery"].map { "\($0)" }?.contains("restored") == true, "\(opened)")
        reopened.close()
    }
}
