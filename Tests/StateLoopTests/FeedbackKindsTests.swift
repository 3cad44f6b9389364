import Observation
import StateLoop
import StateLoopTesting
import Testing

@Suite("bind and custom feedbacks")
struct FeedbackKindsTests {
    @MainActor
    @Test("bind on a main-actor system renders every state synchronously and sends UI events")
    func bindOnMainActor() async {
        var rendered: [Int] = []
        let (taps, tap) = AsyncStream.makeStream(of: Counter.Event.self)
        let system = System(
            initialState: Counter(),
            reduce: Counter.reduce,
            feedbacks: [.bind({ rendered.append($0.count) }, events: taps)]
        )
        #expect(rendered == [0])
        system.send(.increment)
        #expect(rendered == [0, 1])
        tap.yield(.add(10))
        #expect(await yieldUntil { system.state.count == 11 })
        #expect(rendered == [0, 1, 11])
        tap.finish()
    }

    @Test("bind on a system off the main actor renders on the main actor, ending at the latest state")
    func bindOffMainActor() async {
        let rendered = Shared<[Int]>([])
        let signal = Signal<Int>()
        let owner = SystemOwner()
        await owner.start(render: { @MainActor state in
            MainActor.assertIsolated()
            rendered.update { $0.append(state.count) }
            signal.fire(state.count)
        })
        await owner.send(count: 5)
        for await count in signal.stream where count == 5 { break }
        #expect(rendered.value.last == 5)
        #expect(rendered.value == rendered.value.sorted())
    }

    @Test("a custom feedback sees every state and its events are reduced")
    func custom() async {
        let store = await TestSystem(
            initialState: Counter(),
            reduce: Counter.reduce,
            feedbacks: [
                .custom { states in
                    states.compactMap { state -> Counter.Event? in
                        state.count == 2 && state.loaded.isEmpty ? .loaded(2) : nil
                    }
                }
            ]
        )
        await store.send(.increment) { $0.count = 1 }
        await store.send(.increment) { $0.count = 2 }
        await store.receive(.loaded(2)) { $0.loaded = [2] }
        await store.stop()
    }

    @Test("a custom feedback's failure becomes an event")
    func customFailure() async {
        let store = await TestSystem(
            initialState: Counter(),
            reduce: Counter.reduce,
            feedbacks: [
                .custom(
                    { states in
                        states.compactMap { state -> Counter.Event? in
                            if state.count == 1 { throw LoadError(message: "boom") }
                            return state.loaded.isEmpty ? .loaded(state.count) : nil
                        }
                    }, catch: { _ in .failed("boom") })
            ]
        )
        await store.receive(.loaded(0)) { $0.loaded = [0] }
        await store.send(.increment) { $0.count = 1 }
        await store.receive(.failed("boom")) { $0.errors = ["boom"] }
        await store.finish()
    }
}

/// Owns a system on an actor of its own, like a server or a background service would.
actor SystemOwner {
    private var system: System<Counter, Counter.Event>?

    func start(render: @escaping @MainActor @Sendable (Counter) -> Void) {
        system = System(initialState: Counter(), reduce: Counter.reduce, feedbacks: [.bind(render)])
    }

    func send(count: Int) {
        for _ in 0..<count { system?.send(.increment) }
    }
}

@Suite("commands")
struct CommandTests {
    struct AddLoaded: Command {
        func execute(state: Counter, send: Send<Counter.Event>) async {
            await send(.loaded(state.count))
            await send(.loaded(state.count + 1))
        }
    }

    @Test("a command gets a snapshot of the state and sends events back in order")
    func commandSendsEvents() async {
        let store = await TestSystem(initialState: Counter(count: 3), reduce: Counter.reduce)
        await store.execute(AddLoaded())
        await store.receive(.loaded(3)) { $0.loaded = [3] }
        await store.receive(.loaded(4)) { $0.loaded = [3, 4] }
        await store.finish()
    }

    @MainActor
    @Test("a cancelled command cannot send")
    func cancelledCommand() async {
        let log = EventLog<Counter, Counter.Event>()
        let system = System(initialState: Counter(), reduce: Counter.reduce, monitor: log)
        let task = system.run { _, send in
            await waitForCancellation()
            await send(.increment)
        }
        task.cancel()
        await task.value
        #expect(system.state.count == 0)
        #expect(log.discarded.map(\.reason) == [.stale])
    }
}

@MainActor
@Suite("ObservedState")
struct ObservedStateTests {
    @Test("a reader of one property is invalidated only when that property changes")
    func perPropertyInvalidation() {
        let system = System(initialState: Counter(), reduce: Counter.reduce)
        let model = system.observedState()
        let countChanges = Shared(0)
        let loadedChanges = Shared(0)
        func trackCount() {
            withObservationTracking {
                _ = model.count
            } onChange: {
                countChanges.update { $0 += 1 }
            }
        }
        func trackLoaded() {
            withObservationTracking {
                _ = model.loaded
            } onChange: {
                loadedChanges.update { $0 += 1 }
            }
        }
        trackCount()
        trackLoaded()
        system.send(.loaded(1))
        #expect(countChanges.value == 0)
        #expect(loadedChanges.value == 1)
        trackLoaded()
        system.send(.increment)
        #expect(countChanges.value == 1)
        #expect(loadedChanges.value == 1)
        #expect(model.count == 1)
        #expect(model.loaded == [1])
    }

    @Test("a reader of the whole state is invalidated by every change")
    func wholeState() {
        let system = System(initialState: Counter(), reduce: Counter.reduce)
        let model = system.observedState()
        let changes = Shared(0)
        withObservationTracking {
            _ = model.snapshot
        } onChange: {
            changes.update { $0 += 1 }
        }
        system.send(.failed("x"))
        #expect(changes.value == 1)
        #expect(model.snapshot.errors == ["x"])
    }
}
