import Benchmark
import StateLoop

/// Steady-state cost of `System.send` for an event that changes the state: reduce, show the
/// state to every feedback loop, notify one observer. The system is built once in `setup`, so
/// the measured region holds only sends.
func registerSystemBenchmarks() {
    Benchmark(
        "System: 0 feedbacks, 1 observer",
        closure: { benchmark, fixture in
            await fixture.send(events: benchmark.scaledIterations.count)
        },
        setup: { await SystemFixture(idleLoops: 0) }
    )

    Benchmark(
        "System: 3 idle react loops, 1 observer",
        closure: { benchmark, fixture in
            await fixture.send(events: benchmark.scaledIterations.count)
        },
        setup: { await SystemFixture(idleLoops: 3) }
    )
}

@BenchActor
final class SystemFixture {
    private let system: System<Counter, CounterEvent>
    private let observed: ObservedCount
    private let subscription: StateSubscription

    init(idleLoops: Int) {
        // Idle: the query is evaluated on every state and never asks for an effect, which is
        // the common case for most loops of a real feature most of the time.
        let idle = Feedback<Counter, CounterEvent>.react(
            query: { (_: Counter) -> Int? in nil },
            effects: { (_: Int) async -> CounterEvent in .noop }
        )
        system = System(
            initialState: Counter(),
            reduce: Counter.reduce,
            feedbacks: Array(repeating: idle, count: idleLoops)
        )
        let observed = ObservedCount()
        self.observed = observed
        subscription = system.observe { state in observed.last = state.count }
    }

    func send(events: Int) {
        for _ in 0..<events {
            system.send(.increment)
        }
        // Guards against a benchmark that silently stopped doing the work it claims to measure.
        precondition(observed.last == system.state.count, "the observer missed a state")
    }
}
