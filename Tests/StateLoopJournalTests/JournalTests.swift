import Foundation
import StateLoop
import Testing

@testable import StateLoopJournal

@MainActor
@Suite("Journal: append, snapshot, compaction, restore", .timeLimit(.minutes(4)))
struct JournalTests {
    @Test("a new journal starts from the initial state; every sent event is restored, in order")
    func appendAndRestore() throws {
        let folder = TemporaryFolder()
        let (empty, created) = try restore(folder.journal)
        #expect(empty == Tally())
        #expect(created == .created)

        try write((1...10).map(TallyEvent.add), to: folder.journal)
        let (state, recovery) = try restore(folder.journal)
        #expect(state == Tally.folding(1...10))
        #expect(recovery == .restored(snapshotSequence: nil, replayedEvents: 10))
    }

    @Test("every event is committed before any observer sees its state")
    func committedBeforePublished() throws {
        let folder = TemporaryFolder()
        let journal = try Journal<Tally, TallyEvent>(at: folder.journal)
        let system = System(journal: journal, initialState: Tally(), reduce: Tally.reduce)
        var seen: [(count: Int, durable: Int64)] = []
        let subscription = system.observe { state in
            seen.append((state.count, journal.health.durableSequence))
        }
        system.send(.add(1))
        system.send(contentsOf: [.add(2), .add(3)])
        #expect(seen.map(\.count) == [0, 1, 2, 3])
        #expect(seen.allSatisfy { Int64($0.count) <= $0.durable })
        subscription.cancel()
    }

    @Test("transient events are reduced and shown but never written: a relaunch does not replay them")
    func transientEventsAreNotWritten() throws {
        let folder = TemporaryFolder()
        let configuration = JournalConfiguration(snapshotInterval: nil)
        let isNote: @Sendable (TallyEvent) -> Bool = { if case .note = $0 { true } else { false } }
        do {
            let journal = try Journal<Tally, TallyEvent>(at: folder.journal, configuration: configuration, transient: isNote)
            let system = System(journal: journal, initialState: Tally(), reduce: Tally.reduce)
            system.send(contentsOf: [.add(1), .note("typed"), .add(2)])
            #expect(system.state.note == "typed")
            #expect(journal.health.durableSequence == 2)
            system.stop()
            journal.close()
        }
        let journal = try Journal<Tally, TallyEvent>(at: folder.journal, configuration: configuration, transient: isNote)
        let system = System(journal: journal, initialState: Tally(), reduce: Tally.reduce)
        #expect(system.state == Tally.folding([1, 2]))
        #expect(system.state.note == "")
    }

    @Test("a burst sent together is one commit, and observers still see every state in order")
    func batchedSend() throws {
        let folder = TemporaryFolder()
        let journal = try Journal<Tally, TallyEvent>(at: folder.journal)
        let system = System(journal: journal, initialState: Tally(), reduce: Tally.reduce)
        var counts: [Int] = []
        var durableWhenShown: Set<Int64> = []
        let subscription = system.observe { state in
            counts.append(state.count)
            durableWhenShown.insert(journal.health.durableSequence)
            // An event sent while a burst is shown is reduced after the whole burst.
            if state.count == 2 { system.send(.note("after two")) }
        }
        system.send(contentsOf: (1...100).map(TallyEvent.add))
        #expect(counts == Array(0...100) + [100])
        #expect(durableWhenShown == [0, 100, 101])
        #expect(system.state.note == "after two")
        subscription.cancel()
    }

    @Test("the state is saved every N events and the events before it are dropped")
    func snapshotAndCompaction() throws {
        let folder = TemporaryFolder()
        let configuration = JournalConfiguration(snapshotInterval: 4)
        try write((1...10).map(TallyEvent.add), to: folder.journal, configuration: configuration)

        let journal = try Journal<Tally, TallyEvent>(at: folder.journal, configuration: configuration)
        #expect(journal.recovery == .restored(snapshotSequence: 8, replayedEvents: 2))
        var stored: [Int64] = []
        try journal.database.forEachRow(after: 0) { first, last, _ in stored += Array(first...last) }
        #expect(stored == [9, 10])
        let system = System(journal: journal, initialState: Tally(), reduce: Tally.reduce)
        #expect(system.state == Tally.folding(1...10))
        system.stop()
    }

    @Test("a restored tail of N events or more is saved at once, so the next launch replays nothing")
    func longTailSavedOnRestore() throws {
        let folder = TemporaryFolder()
        try write((1...50).map(TallyEvent.add), to: folder.journal)
        let (_, first) = try restore(folder.journal, configuration: JournalConfiguration(snapshotInterval: 20))
        #expect(first == .restored(snapshotSequence: nil, replayedEvents: 50))
        let (state, second) = try restore(folder.journal, configuration: JournalConfiguration(snapshotInterval: 20))
        #expect(second == .restored(snapshotSequence: 50, replayedEvents: 0))
        #expect(state == Tally.folding(1...50))
    }

    @Test("sequence numbers go on after a restore, with no event applied twice")
    func severalLaunches() throws {
        let folder = TemporaryFolder()
        let configuration = JournalConfiguration(snapshotInterval: 3)
        for launch in 0..<5 {
            try write((1...4).map { TallyEvent.add(launch * 10 + $0) }, to: folder.journal, configuration: configuration)
        }
        let (state, _) = try restore(folder.journal, configuration: configuration)
        #expect(state == Tally.folding((0..<5).flatMap { launch in (1...4).map { launch * 10 + $0 } }))
    }

    @Test("the restored state restarts the effects it calls for, with no code of its own")
    func restoredStateRestartsEffects() async throws {
        let folder = TemporaryFolder()
        let configuration = JournalConfiguration(snapshotInterval: nil)
        try write([.add(1), .note("upload"), .add(2)], to: folder.journal, configuration: configuration)

        let journal = try Journal<Tally, TallyEvent>(at: folder.journal, configuration: configuration)
        let (started, effect) = AsyncStream.makeStream(of: Int.self)
        let system = System(
            journal: journal,
            initialState: Tally(),
            reduce: Tally.reduce,
            feedbacks: [
                // Uploading until two more values are added after the note.
                .react(query: { $0.note == "upload" && $0.count < 4 ? $0.count : nil }) { count in
                    effect.yield(count)
                    return .add(100 + count)
                }
            ]
        )
        var iterator = started.makeAsyncIterator()
        #expect(await iterator.next() == 2)
        #expect(await iterator.next() == 3)
        for await state in system.states where state.count == 4 { break }
        #expect(
            system.state
                == {
                    var expected = Tally.folding([1, 2, 102, 103])
                    expected.note = "upload"
                    return expected
                }())
        system.stop()
    }

    @Test("an event that cannot be encoded is applied in memory and reported, never silently lost")
    func unencodableEvent() async throws {
        let folder = TemporaryFolder()
        let journal = try Journal<Tally, TallyEvent>(at: folder.journal)
        var errors = journal.errors().makeAsyncIterator()
        let system = System(journal: journal, initialState: Tally(), reduce: Tally.reduce)
        system.send(.measure(.nan))
        system.send(.add(1))
        guard case .unencodableEvent(_, let sequence, _) = await errors.next() else {
            Issue.record("expected an unencodable event")
            return
        }
        #expect(sequence == 1)
        #expect(system.state.count == 1)
        // Its number is not given to the next event: sequence numbers may have gaps.
        #expect(journal.health.durableSequence == 2)
        system.stop()
    }

    @Test("a commit of thousands of events is stored as rows coded in parallel: restored in order, an unencodable one left out and reported")
    func longCommitInRows() async throws {
        let folder = TemporaryFolder()
        var events = (1...2_000).map(TallyEvent.add)
        events[1_233] = .measure(.nan)  // in the third row of 512
        let journal = try Journal<Tally, TallyEvent>(at: folder.journal, configuration: JournalConfiguration(snapshotInterval: nil))
        var errors = journal.errors().makeAsyncIterator()
        let system = System(journal: journal, initialState: Tally(), reduce: Tally.reduce)
        system.send(contentsOf: events)
        guard case .unencodableEvent(_, let sequence, _) = await errors.next() else {
            Issue.record("expected an unencodable event")
            return
        }
        #expect(sequence == 1_234)
        #expect(journal.health.durableSequence == 2_000)
        var rows: [ClosedRange<Int64>] = []
        try journal.database.forEachRow(after: 0) { first, last, _ in rows.append(first...last) }
        #expect(rows == [1...512, 513...1_024, 1_025...1_536, 1_537...2_000])
        system.stop()
        journal.close()

        let (state, recovery) = try restore(folder.journal)
        #expect(state == Tally.folding((1...2_000).filter { $0 != 1_234 }))
        #expect(recovery == .restored(snapshotSequence: nil, replayedEvents: 1_999))
    }
}
