import Testing

@testable import StateLoop

/// G4: stopping or releasing a system cancels every effect and retains nothing.
@MainActor
@Suite("G4 lifetime")
struct LifetimeTests {
    @Test("releasing a system cancels its effects and frees the system and its core")
    func releaseCancelsAndFrees() async {
        let exited = Signal<Int>()
        weak var weakSystem: System<Counter, Counter.Event>?
        weak var weakCore: SystemCore<Counter, Counter.Event>?
        do {
            let system = System(
                initialState: Counter(request: 1, requests: [2, 3]),
                reduce: Counter.reduce,
                feedbacks: [
                    .react(query: \.request) { request, _ in
                        await waitForCancellation()
                        exited.fire(request)
                    },
                    .react(queries: \.requests) { request, _ in
                        await waitForCancellation()
                        exited.fire(request)
                    },
                    .custom { states in
                        states.compactMap { _ in nil as Counter.Event? }
                    },
                ]
            )
            let subscription = system.observe { _ in }
            system.run { _, _ in
                await waitForCancellation()
                exited.fire(4)
            }
            #expect(system.runningTaskCount == 5)
            weakSystem = system
            weakCore = system.core
            _ = subscription
        }
        #expect(weakSystem == nil)
        var exits: Set<Int> = []
        for await request in exited.stream {
            exits.insert(request)
            if exits.count == 4 { break }
        }
        #expect(exits == [1, 2, 3, 4])
        // The core lives only as long as an effect task still runs.
        #expect(await yieldUntil { weakCore == nil })
    }

    @Test("stop cancels every effect and command, and nothing they send is reduced")
    func stopCancels() async {
        let log = EventLog<Counter, Counter.Event>()
        let started = Signal<Send<Counter.Event>>()
        let system = System(
            initialState: Counter(request: 1),
            reduce: Counter.reduce,
            feedbacks: [
                .react(query: \.request) { _, send in
                    started.fire(send)
                    await waitForCancellation()
                }
            ],
            monitor: log
        )
        let command = system.run { _, send in
            await waitForCancellation()
            await send(.increment)
        }
        guard let effectSend = await started.next() else {
            Issue.record("no effect")
            return
        }
        system.stop()
        await command.value
        await effectSend(.loaded(1))
        system.send(.increment)
        #expect(system.state == Counter(request: 1))
        #expect(log.reduced.isEmpty)
        #expect(Set(log.discarded.map(\.event)) == [.increment, .loaded(1)])
        #expect(await yieldUntil { system.runningTaskCount == 0 })
    }

    @Test("a system that is only observed, with no effect, is freed at once")
    func noRetainCycleWithObservers() {
        weak var weakSystem: System<Counter, Counter.Event>?
        var subscription: StateSubscription?
        do {
            let system = System(initialState: Counter(), reduce: Counter.reduce)
            subscription = system.observe { _ in }
            _ = system.observedState()
            weakSystem = system
        }
        #expect(weakSystem == nil)
        subscription?.cancel()
    }
}

@MainActor
@Suite("G4 lifetime: stopping from inside")
struct StopFromInsideTests {
    @Test("an observer that stops the system or cancels subscriptions while notified is safe")
    func stopWhileNotifying() {
        let system = System(
            initialState: Counter(),
            reduce: Counter.reduce,
            feedbacks: [.react(query: \.request) { _, _ in await waitForCancellation() }]
        )
        var later: [Int] = []
        var second: StateSubscription?
        let first = system.observe { state in
            if state.count == 1 {
                second?.cancel()
                system.stop()
            }
        }
        second = system.observe { later.append($0.count) }
        system.send(.ask(1))
        system.send(.increment)
        system.send(.increment)
        #expect(system.isStopped)
        #expect(system.state.count == 1)
        #expect(later == [0, 0, 1])
        _ = first
    }
}
