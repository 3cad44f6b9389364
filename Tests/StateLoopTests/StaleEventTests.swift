import StateLoopTesting
import Testing

@testable import StateLoop

/// G2: once an effect's request changed or went away, none of its events is reduced.
@Suite("G2 no stale events")
struct StaleEventTests {
    @MainActor
    @Test("an event already queued behind the change that cancels its effect is discarded")
    func queuedEventOfCancelledEffect() async {
        let handles = Signal<Send<Counter.Event>>()
        let log = EventLog<Counter, Counter.Event>()
        let system = System(
            initialState: Counter(),
            reduce: Counter.reduce,
            feedbacks: [
                .react(query: \.request) { _, send in
                    handles.fire(send)
                    await waitForCancellation()
                }
            ],
            monitor: log
        )
        system.send(.ask(1))
        guard let send = await handles.next() else {
            Issue.record("the effect never started")
            return
        }

        // While the system is busy, the request changes, and right behind that change an event
        // of the old effect arrives: queued while its effect was still live, reduced after.
        var raced = false
        let subscription = system.observe { state in
            if state.count == 1 && !raced {
                raced = true
                system.send(.ask(2))
                system.core.enqueue(.loaded(1), origin: send.origin)
            }
        }
        system.send(.increment)

        #expect(system.state.request == 2)
        #expect(system.state.loaded.isEmpty)
        #expect(log.discarded.map(\.event) == [.loaded(1)])
        #expect(log.discarded.map(\.reason) == [.stale])
        subscription.cancel()
    }

    @Test("an effect that ignores cancellation still cannot deliver after its request changed")
    func effectIgnoringCancellation() async {
        let gate = Shared<[CheckedContinuation<Void, Never>]>([])
        let store = await TestSystem(
            initialState: Counter(),
            reduce: Counter.reduce,
            feedbacks: [
                .react(query: \.request) { request, send in
                    // Not cancellable on purpose: the effect runs on after its request changed.
                    await withCheckedContinuation { continuation in
                        gate.update { $0.append(continuation) }
                    }
                    await send(.loaded(request))
                }
            ]
        )
        await store.send(.ask(1)) { $0.request = 1 }
        await store.send(.ask(2)) { $0.request = 2 }
        for continuation in gate.update({ gates in
            defer { gates = [] }
            return gates
        }) {
            continuation.resume()
        }
        await store.receive(.loaded(2)) { $0.loaded = [2] }
        #expect(await store.unassertedEvents.isEmpty)
        await store.send(.ask(nil)) { $0.request = nil }
        await store.finish()
    }

    @MainActor
    @Test("under real concurrency, 2,000 request changes never let an old result through")
    func stressRequestChanges() async {
        let stale = Shared(0)
        let system = System(
            initialState: Counter(),
            reduce: { (state: inout Counter, event: Counter.Event) in
                if case .loaded(let value) = event, value != state.request {
                    stale.update { $0 += 1 }
                }
                Counter.reduce(&state, event)
            },
            feedbacks: [
                .react(query: \.request) { request in
                    await Task.yield()
                    return .loaded(request)
                }
            ]
        )
        for request in 1...2_000 {
            system.send(.ask(request))
            if request.isMultiple(of: 7) { await Task.yield() }
        }
        #expect(await yieldUntil { system.state.loaded.last == 2_000 })
        system.send(.ask(nil))
        #expect(await yieldUntil { system.runningTaskCount == 0 })
        #expect(stale.value == 0)
        #expect(system.state.loaded.count < 2_000)
    }
}
