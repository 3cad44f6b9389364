import StateLoop
import StateLoopWire
import TestSupport
import Testing

@_spi(Benchmarks) @testable import StateLoopCollections

/// A system follows a live query chosen by its state, and switches when the state's choice does.
@Suite struct FeedbackRowsTests {
    struct Screen: Sendable {
        var project = "p1"
        var titles: [String] = []
    }

    enum Event: Sendable {
        case open(String)
        case shown([String])
    }

    static func reduce(_ state: inout Screen, _ event: Event) {
        switch event {
        case .open(let project): state.project = project
        case .shown(let titles): state.titles = titles
        }
    }

    @MainActor
    @Test func theStateChoosesTheQuery() async throws {
        let store = try LocalStore.inMemory()
        let tasks = store.collection(Board.tasks, mutations: Board.TaskMutation.self)
        try tasks.record("s")
        try tasks.apply(
            RowsDifference(
                cookie: Board.cookie(1), replace: true,
                rows: Board.versioned([Board.task("a", in: "p1", at: 1), Board.task("b", in: "p2", at: 1)]), removed: []),
            requestedWith: nil, to: "s")
        let system = System(
            initialState: Screen(), reduce: Self.reduce,
            feedbacks: [.rows(of: tasks, query: { Board.project($0.project) }, event: { .shown($0.map(\.title)) })])
        defer { system.stop() }
        #expect(await eventually { system.state.titles == ["a"] }, "p1's tasks never shown: \(system.state.titles)")
        try tasks.mutate(.rename(id: "a", title: "a2"))
        #expect(await eventually { system.state.titles == ["a2"] }, "the change never shown: \(system.state.titles)")
        system.send(.open("p2"))
        #expect(await eventually { system.state.titles == ["b"] }, "p2's tasks never shown: \(system.state.titles)")
        // The first query stopped with the switch: a change to p1 leaves the screen on p2's.
        try tasks.mutate(.rename(id: "a", title: "a3"))
        try tasks.mutate(.rename(id: "b", title: "b2"))
        #expect(await eventually { system.state.titles == ["b2"] }, "\(system.state.titles)")
    }
}
