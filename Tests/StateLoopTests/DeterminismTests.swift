import StateLoop
import TestSupport
import Testing

/// G5: the same events in the same order give the same states.
@MainActor
@Suite("G5 determinism")
struct DeterminismTests {
    static func randomEvents(seed: UInt64, count: Int) -> [Counter.Event] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            switch Int.random(in: 0..<5, using: &generator) {
            case 0: .increment
            case 1: .add(Int.random(in: -5...5, using: &generator))
            case 2: .loaded(Int.random(in: 0...9, using: &generator))
            case 3: .failed("e\(Int.random(in: 0...3, using: &generator))")
            default: .askAll(Set((0..<Int.random(in: 0...3, using: &generator)).map { $0 }))
            }
        }
    }

    @Test("two systems fed the same events pass through the same states as a plain fold", arguments: [1, 7, 42, 2026])
    func sameEventsSameStates(seed: UInt64) {
        let events = Self.randomEvents(seed: seed, count: 2_000)
        var folded: [Counter] = []
        var state = Counter()
        for event in events {
            Counter.reduce(&state, event)
            folded.append(state)
        }
        for _ in 0..<2 {
            let system = System(initialState: Counter(), reduce: Counter.reduce)
            var seen: [Counter] = []
            let subscription = system.observe { seen.append($0) }
            for event in events { system.send(event) }
            #expect(Array(seen.dropFirst()) == folded)
            subscription.cancel()
        }
    }
}
