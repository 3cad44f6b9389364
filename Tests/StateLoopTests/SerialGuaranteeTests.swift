import StateLoop
import Testing

/// G1: events are reduced one at a time, in arrival order, never re-entrantly.
@MainActor
@Suite("G1 serial reduction")
struct SerialGuaranteeTests {
    @Test("an event sent from an observer is queued, not reduced inside the send")
    func observerSendIsQueued() {
        let system = System(initialState: Counter(), reduce: Counter.reduce)
        var countRightAfterSend: [Int] = []
        let subscription = system.observe { state in
            if state.count == 1 {
                system.send(.increment)
                // Re-entrant reduction would already show 2 here.
                countRightAfterSend.append(system.state.count)
            }
        }
        system.send(.increment)
        #expect(countRightAfterSend == [1])
        #expect(system.state.count == 2)
        subscription.cancel()
    }

    @Test("every observer sees the states in order even when an earlier observer sends")
    func observersSeeStatesInOrder() {
        let system = System(initialState: Counter(), reduce: Counter.reduce)
        var first: [Int] = []
        var second: [Int] = []
        let a = system.observe { state in
            first.append(state.count)
            if state.count >= 1 && state.count < 3 { system.send(.increment) }
        }
        let b = system.observe { state in second.append(state.count) }
        system.send(.increment)
        // Reduced re-entrantly, the first observer's sends would run before the second observer
        // hears of state 1, and the second observer would see 0, 3, 2, 1.
        #expect(first == [0, 1, 2, 3])
        #expect(second == [0, 1, 2, 3])
        _ = (a, b)
    }

    @Test("events sent while processing keep their arrival order")
    func arrivalOrder() {
        let log = EventLog<Counter, Counter.Event>()
        let system = System(initialState: Counter(), reduce: Counter.reduce, monitor: log)
        let subscription = system.observe { state in
            if state.count == 1 {
                system.send(.add(10))
                system.send(.add(100))
            }
            if state.count == 11 {
                system.send(.add(1000))
            }
        }
        system.send(.increment)
        #expect(log.reduced.map(\.event) == [.increment, .add(10), .add(100), .add(1000)])
        #expect(system.state.count == 1111)
        subscription.cancel()
    }

    @Test("a chain of 1,000,000 events, each sent by the observer of the last, runs in constant stack")
    func millionEventChain() {
        let system = System(initialState: Counter(), reduce: Counter.reduce)
        let subscription = system.observe { state in
            if state.count > 0 && state.count < 1_000_000 {
                system.send(.increment)
            }
        }
        // Reduced recursively, this chain would need a million nested frames and overflow the
        // stack long before the end.
        system.send(.increment)
        #expect(system.state.count == 1_000_000)
        subscription.cancel()
    }
}
