import Foundation
import Observation
import StateLoopSync
import StateLoopWire
import TestSupport
import Testing

@_spi(Benchmarks) @testable import StateLoopCollections

/// A live query's rows as an `Observable` on the main actor: a reader is told of a change, and
/// sees the newest rows.
@MainActor
@Suite struct ObservedRowsTests {
    @Test func aReaderIsToldWhenTheRowsChange() async throws {
        let store = try LocalStore.inMemory()
        let tasks = store.collection(Board.tasks, mutations: Board.TaskMutation.self)
        let live = tasks.live(Board.project("p1"))
        let observed = live.observed()
        #expect(observed.rows.isEmpty)
        let told = Locked(0)
        withObservationTracking {
            _ = observed.rows
        } onChange: {
            told.withLock { $0 += 1 }
        }
        try tasks.mutate(.put(Board.task("a", at: 1)))
        try tasks.mutate(.put(Board.task("b", at: 2)))
        let caughtUp = await eventually { observed.rows.map(\.id) == ["a", "b"] }
        #expect(caughtUp, "the observed rows never showed both tasks: \(observed.rows.map(\.id))")
        // Told once per tracking, however many changes came (the screen reads them again).
        #expect(told.value == 1)

        // Stopped: the rows stay as they were, whatever the query shows next.
        observed.stop()
        try tasks.mutate(.delete(id: "a"))
        let deleted = await eventually { live.rows.map(\.id) == ["b"] }
        #expect(deleted, "the live query never dropped the deleted task")
        await Task.yield()
        #expect(observed.rows.map(\.id) == ["a", "b"])
    }

    /// Stopped between two changes, it never shows the second, however the stop and the
    /// stream's delivery interleave (a value already handed to its task was set after the stop
    /// in one round of five beside two CPU hogs).
    @Test func stoppedItShowsNoLaterChange() async throws {
        var shownAfterStop: [[String]] = []
        for _ in 0..<300 {
            let store = try LocalStore.inMemory()
            let tasks = store.collection(Board.tasks, mutations: Board.TaskMutation.self)
            let live = tasks.live(Board.project("p1"))
            let observed = live.observed()
            try tasks.mutate(.put(Board.task("a", at: 1)))
            try tasks.mutate(.put(Board.task("b", at: 2)))
            let caughtUp = await eventually { observed.rows.map(\.id) == ["a", "b"] }
            try #require(caughtUp, "the observed rows never showed both tasks: \(observed.rows.map(\.id))")
            observed.stop()
            try tasks.mutate(.delete(id: "a"))
            let deleted = await eventually { live.rows.map(\.id) == ["b"] }
            try #require(deleted, "the live query never dropped the deleted task")
            for _ in 0..<4 { await Task.yield() }
            if observed.rows.map(\.id) != ["a", "b"] { shownAfterStop.append(observed.rows.map(\.id)) }
        }
        #expect(shownAfterStop.isEmpty, "after stop() the observed rows changed \(shownAfterStop.count) times of 300")
    }

    /// Released, it stops following: the query's stream is let go at once, not at its next
    /// change.
    @Test func releasedItLetsTheQueryGo() async throws {
        let store = try LocalStore.inMemory()
        let tasks = store.collection(Board.tasks, mutations: Board.TaskMutation.self)
        let live = tasks.live(Board.project("p1"))
        weak var released: ObservedRows<Board.TaskRow>?
        do {
            let observed = live.observed()
            released = observed
            await Task.yield()
        }
        #expect(released == nil)
        let letGo = await eventually { live.watcherCount == 0 }
        #expect(letGo, "the released observer still follows the query")
    }
}
