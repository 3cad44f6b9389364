import Benchmark

/// Reference points measured in the same run as the StateLoop benchmarks, so that ratios stay
/// meaningful on a noisy machine.
func registerBaselineBenchmarks() {
    // The floor: the same reducer applied in a loop, with nothing around it. The reducer is
    // called through an opaque function value, as `System` does, so the compiler cannot fold
    // the loop into one addition.
    Benchmark("Baseline: for loop reducer") { benchmark in
        let reduce = identity(Counter.reduce)
        var state = Counter()
        for _ in benchmark.scaledIterations {
            reduce(&state, .increment)
        }
        blackHole(state)
    }

    // What a store written without StateLoop typically looks like: events go through an
    // AsyncStream to a consumer task that owns the state, reduces and notifies an observer.
    Benchmark(
        "Baseline: naive AsyncStream store",
        closure: { benchmark, store in
            await store.sendAndDrain(events: benchmark.scaledIterations.count)
        },
        setup: { await AsyncStreamStore() }
    )
}

@BenchActor
final class AsyncStreamStore {
    private var state = Counter()
    private let observed: ObservedCount
    /// A stored closure, as in `System`, so that notifying costs the same indirect call.
    private let observer: (Counter) -> Void
    private let input: AsyncStream<CounterEvent>.Continuation
    private var reduced = 0
    private var target = 0
    private var waiter: CheckedContinuation<Void, Never>?

    init() {
        let observed = ObservedCount()
        self.observed = observed
        observer = { state in observed.last = state.count }
        let (events, input) = AsyncStream.makeStream(of: CounterEvent.self)
        self.input = input
        // Inherits BenchActor, like a store's consumer task started from a @MainActor init.
        // It holds the store until the stream ends, so the store lives for the whole run.
        Task { await self.consume(events) }
    }

    /// Sends like a UI would (from the store's actor, without waiting), then waits until the
    /// consumer has reduced every event: throughput means events fully applied.
    func sendAndDrain(events: Int) async {
        for _ in 0..<events {
            input.yield(.increment)
        }
        target += events
        if reduced < target {
            await withCheckedContinuation { waiter = $0 }
        }
        precondition(observed.last == state.count, "the observer missed a state")
    }

    private func consume(_ events: AsyncStream<CounterEvent>) async {
        for await event in events {
            Counter.reduce(&state, event)
            observer(state)
            reduced += 1
            if reduced >= target, let waiter {
                self.waiter = nil
                waiter.resume()
            }
        }
    }
}
