import StateLoop
import Testing

/// G3: observers always see the latest state; a feedback's query sees every state.
@MainActor
@Suite("G3 latest state, every state")
struct LatestStateTests {
    @Test("a react query is evaluated against every state, in order")
    func queryEvaluatedOnEveryState() {
        let seen = Shared<[Int]>([])
        let system = System(
            initialState: Counter(),
            reduce: Counter.reduce,
            feedbacks: [
                .react(
                    query: { (state: Counter) -> Int? in
                        seen.update { $0.append(state.count) }
                        return nil
                    }, effects: { (_: Int) async -> Counter.Event in .increment })
            ]
        )
        var sent: [Int] = []
        let subscription = system.observe { state in
            // Events sent from the observer arrive between states: the query must see each.
            if state.count.isMultiple(of: 2) && state.count > 0 && state.count < 10 {
                system.send(.increment)
            }
            sent.append(state.count)
        }
        for _ in 0..<3 { system.send(.increment) }
        #expect(seen.value == Array(0...system.state.count))
        #expect(sent == Array(0...system.state.count))
        subscription.cancel()
    }

    @Test("an observer reading the system while notified reads the state it is given")
    func observerReadsLatest() {
        let system = System(initialState: Counter(), reduce: Counter.reduce)
        var mismatches = 0
        let a = system.observe { state in
            if state.count == 1 { system.send(.add(5)) }
        }
        let b = system.observe { state in
            if system.state != state { mismatches += 1 }
        }
        system.send(.increment)
        system.send(.increment)
        #expect(mismatches == 0)
        #expect(system.state.count == 7)
        _ = (a, b)
    }

    @Test("a late observer and a late stream start from the current state")
    func lateSubscribersGetCurrentState() async {
        let system = System(initialState: Counter(), reduce: Counter.reduce)
        system.send(.add(41))
        var first: Int?
        let subscription = system.observe { state in first = first ?? state.count }
        #expect(first == 41)
        var iterator = system.states.makeAsyncIterator()
        #expect(await iterator.next()?.count == 41)
        system.send(.increment)
        #expect(await iterator.next()?.count == 42)
        subscription.cancel()
    }

    @Test("a slow stream consumer skips to the latest state")
    func streamKeepsLatest() async {
        let system = System(initialState: Counter(), reduce: Counter.reduce)
        var iterator = system.states.makeAsyncIterator()
        for _ in 0..<100 { system.send(.increment) }
        #expect(await iterator.next()?.count == 100)
    }

    @Test("the states stream finishes when the system stops")
    func streamFinishesOnStop() async {
        let system = System(initialState: Counter(), reduce: Counter.reduce)
        var iterator = system.states.makeAsyncIterator()
        system.stop()
        #expect(await iterator.next()?.count == 0)
        #expect(await iterator.next() == nil)
    }
}
