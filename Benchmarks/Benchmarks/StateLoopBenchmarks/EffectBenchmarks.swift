import Benchmark
import StateLoop

/// Full life of an effect that is superseded at once: every event changes the request, so the
/// system cancels the running effect and spawns a new one. An iteration ends only when every
/// effect it started has come back to the actor (its event reduced or discarded as stale), so
/// the cost of the tasks on the other core and of their hops back is inside the measurement.
func registerEffectBenchmarks() {
    Benchmark(
        "Effect start+cancel",
        // An effect costs microseconds, not nanoseconds: a thousand per iteration keeps
        // iterations short enough for a useful number of samples.
        configuration: .init(scalingFactor: .kilo),
        closure: { benchmark, fixture in
            await fixture.startAndCancel(effects: benchmark.scaledIterations.count)
        },
        setup: { await EffectFixture() }
    )
}

@BenchActor
final class EffectFixture {
    private let system: System<Counter, CounterEvent>
    private let arrivals: ArrivalMonitor
    /// Effects spawned so far; the initial state already asks for one.
    private var started = 1

    init() {
        let arrivals = ArrivalMonitor()
        self.arrivals = arrivals
        system = System(
            initialState: Counter(),
            reduce: Counter.reduce,
            feedbacks: [
                .react(
                    query: { (state: Counter) -> Int? in state.count },
                    effects: { (_: Int) async -> CounterEvent in
                        // One suspension, so that the effect is really running (or queued) on
                        // the executor when the next event cancels it.
                        await Task.yield()
                        return .noop
                    }
                )
            ],
            monitor: arrivals
        )
    }

    func startAndCancel(effects: Int) async {
        for index in 0..<effects {
            system.send(.increment)
            // Events from a UI arrive with the actor idle in between, which is when cancelled
            // effects hop back and are cleaned up. Without this pause every effect of the
            // iteration would pile up unfinished behind the send loop, which is not the steady
            // state this benchmark is about.
            if index % 100 == 99 {
                await Task.yield()
            }
        }
        started += effects
        await arrivals.wait(for: started)
    }
}

/// Counts the events effects send back, reduced or discarded, and wakes the benchmark once all
/// have arrived. Called only on `BenchActor`, by the system.
final class ArrivalMonitor: SystemMonitor {
    private var arrived = 0
    private var target = 0
    private var waiter: CheckedContinuation<Void, Never>?

    func system(didReduce event: CounterEvent, source: EventSource, into state: Counter) {
        if source == .effect {
            arrive()
        }
    }

    func system(didDiscard event: CounterEvent, reason: DiscardReason) {
        arrive()
    }

    private func arrive() {
        arrived += 1
        if arrived >= target, let waiter {
            self.waiter = nil
            waiter.resume()
        }
    }

    func wait(for count: Int, isolation: isolated (any Actor)? = #isolation) async {
        guard arrived < count else { return }
        target = count
        await withCheckedContinuation { waiter = $0 }
    }
}
