import Foundation
import StateLoop
import StateLoopJournal
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// The time limit is a hang guard: the 24 migrations take about a minute on an idle machine,
// and over five beside two CPU hogs and two builds.

/// A migration killed with SIGKILL: the journal is the old one, intact, or the new one,
/// complete; never a mix.
@Suite("Journal: migrations killed in a real process", .serialized, .timeLimit(.minutes(12)))
struct MigrationCrashTests {
    static let events = 100_000

    /// The child's fold of the values 1...n, as the child reports it.
    struct Fold: Codable, Sendable, Equatable {
        var count = 0
        var sum = 0
        var checksum: UInt64 = 14_695_981_039_346_656_037

        static func reduce(_ state: inout Fold, _ value: Int) {
            state.count += 1
            state.sum += value
            state.checksum = (state.checksum ^ UInt64(truncatingIfNeeded: value)) &* 1_099_511_628_211
        }

        static let expected: Fold = {
            var fold = Fold()
            for value in 1...MigrationCrashTests.events { reduce(&fold, value) }
            return fold
        }()

        var line: String { "restored \(count) \(sum) \(checksum)" }
    }

    struct Entry: Codable, Sendable {
        let value: Int
    }

    enum Found: Equatable {
        case old
        case migrated
    }

    /// What the journal at `path` holds after a kill: the version 1 journal with every event, or
    /// the version 2 one with every event; anything else fails the test.
    @MainActor
    static func inspect(_ path: String, run: Int) throws -> Found {
        let old: Journal<Fold, Int>
        do {
            old = try Journal(at: path, configuration: JournalConfiguration(snapshotInterval: nil, unreadable: .fail))
        } catch {
            guard case .newerSchema(_, .events, 2, 1) = error else { throw error }
            try inspectMigrated(path, run: run)
            return .migrated
        }
        let system = System(journal: old, initialState: Fold(), reduce: Fold.reduce)
        #expect(system.state == Fold.expected, "run \(run): the old journal is not intact")
        system.stop()
        old.close()
        return .old
    }

    @MainActor
    static func inspectMigrated(_ path: String, run: Int) throws {
        var schema = JournalSchema()
        schema.setVersion(2, of: .events)
        let journal = try Journal<Fold, Entry>(
            at: path, configuration: JournalConfiguration(schema: schema, snapshotInterval: nil, unreadable: .fail)
        )
        let system = System(journal: journal, initialState: Fold()) { state, entry in Fold.reduce(&state, entry.value) }
        #expect(journal.migration == nil)
        #expect(system.state == Fold.expected, "run \(run): the migrated journal is not complete")
        system.stop()
        journal.close()
    }

    @Test("24 kills at random points of a migration of 100,000 events: each relaunch finds the old journal intact or the new one complete")
    func killedDuringMigration() async throws {
        let folder = TemporaryFolder()
        let pristine = folder.path + "/pristine.journal"
        let fill = try ChildProcess("journal-crash-child", ["fill", pristine, "\(Self.events)"])
        #expect(fill.readLine() == "filled \(Self.events)")
        #expect(await fill.ended().status == 0)

        // One migration to its end: it must work, and its duration spreads the kills.
        try FileManager.default.copyItem(atPath: pristine, toPath: folder.journal)
        let started = ContinuousClock.now
        let full = try ChildProcess("journal-crash-child", ["migrate", folder.journal])
        #expect(full.readLine() == "started")
        #expect(full.readLine() == Fold.expected.line)
        #expect(await full.ended().status == 0)
        let duration = ContinuousClock.now - started
        #expect(try await Self.inspect(folder.journal, run: -1) == .migrated)

        var random = SplitMix64(seed: 20_261_125)
        var found: [Found] = []
        for run in 0..<24 {
            if found.last != .old {
                try? FileManager.default.removeItem(atPath: folder.journal)
                try FileManager.default.copyItem(atPath: pristine, toPath: folder.journal)
            }
            let child = try ChildProcess("journal-crash-child", ["migrate", folder.journal])
            #expect(child.readLine() == "started")
            // Anywhere from the open to a little past the commit.
            let delay = duration * (Double(random.next() % 1_100) / 1_000)
            try await Task.sleep(for: delay)
            let ended = child.kill()
            let outcome = try await Self.inspect(folder.journal, run: run)
            found.append(outcome)
            if ended.signal != SIGKILL {
                #expect(outcome == .migrated, "run \(run): the child ended by itself without migrating")
            }
        }
        // The kills must have landed inside migrations, not only after them.
        #expect(found.contains(.old), "no kill interrupted a migration: \(found)")
    }
}
