import Testing

@testable import StateLoopSimulation

/// The pure part of a simulation: which job runs next, and when time moves.
@Suite struct SimulationQueueTests {
    /// The same seed picks the same order among jobs ready together; another seed, another
    /// order (among many jobs, at least once in a few seeds).
    @Test func aSeedDecidesTheOrder() {
        func order(_ seed: UInt64) -> [Int] {
            var queue = SimulationQueue<Int>()
            var random = SimulationRandom(seed: seed)
            for job in 0..<20 { queue.enqueue(job) }
            var ran: [Int] = []
            while case .run(let job, _, _) = queue.next(&random) { ran.append(job) }
            return ran
        }
        #expect(order(7) == order(7))
        #expect(order(7).sorted() == Array(0..<20), "every job runs once")
        #expect((8..<12).contains { order($0) != order(7) })
    }

    /// Time moves only when nothing is ready, to the earliest sleeper; sleepers due together
    /// wake in the order they slept; a sleeper woken early runs now, and only once.
    @Test func timeMovesOnlyWhenNothingIsReady() {
        var queue = SimulationQueue<String>()
        var random = SimulationRandom(seed: 1)
        queue.enqueue("late", at: .seconds(5))
        let early = queue.enqueue("cancelled", at: .seconds(9))
        queue.enqueue("first of two", at: .seconds(2))
        queue.enqueue("second of two", at: .seconds(2))
        queue.enqueue("ready")
        guard case .run("ready", 0, 1) = queue.next(&random) else {
            Issue.record("a ready job runs before any sleeper")
            return
        }
        #expect(queue.now == .zero)
        let woken = queue.wakeEarly(early)
        let again = queue.wakeEarly(early)
        #expect(woken && !again, "woken once")
        guard case .run("cancelled", _, _) = queue.next(&random) else {
            Issue.record("a sleeper woken early runs at once")
            return
        }
        var woke: [(String, Duration)] = []
        while case .wake(let job, let instant) = queue.next(&random) { woke.append((job, instant)) }
        #expect(woke.map(\.0) == ["first of two", "second of two", "late"])
        #expect(woke.map(\.1) == [.seconds(2), .seconds(2), .seconds(5)])
        #expect(queue.isEmpty && queue.now == .seconds(5))
    }

    /// A sleeper due before now (registered late) wakes now: time never goes back.
    @Test func timeNeverGoesBack() {
        var queue = SimulationQueue<Int>()
        var random = SimulationRandom(seed: 3)
        queue.enqueue(1, at: .seconds(10))
        _ = queue.next(&random)
        queue.enqueue(2, at: .seconds(4))
        guard case .wake(2, let instant) = queue.next(&random) else {
            Issue.record("the sleeper wakes")
            return
        }
        #expect(instant == .seconds(10))
    }
}
