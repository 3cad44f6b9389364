import StateLoop
import StateLoopTesting
import Testing

struct LoadError: Error, Equatable {
    let message: String
}

@Suite("react(query:effects:)")
struct ReactTests {
    @Test("nil starts nothing, a request starts an effect, an equal request keeps it, a new one replaces it")
    func lifecycle() async {
        let started = Shared<[Int]>([])
        let cancelled = Shared<[Int]>([])
        let store = await TestSystem(
            initialState: Counter(),
            reduce: Counter.reduce,
            feedbacks: [
                .react(query: \.request) { request, _ in
                    started.update { $0.append(request) }
                    await waitForCancellation()
                    cancelled.update { $0.append(request) }
                }
            ]
        )
        #expect(started.value.isEmpty)
        await store.send(.ask(1)) { $0.request = 1 }
        await store.send(.increment) { $0.count = 1 }
        await store.send(.ask(1))
        #expect(started.value == [1])
        #expect(cancelled.value.isEmpty)
        await store.send(.ask(2)) { $0.request = 2 }
        #expect(started.value == [1, 2])
        #expect(cancelled.value == [1])
        await store.send(.ask(nil)) { $0.request = nil }
        #expect(cancelled.value == [1, 2])
        await store.finish()
    }

    @Test("an effect that returns its event")
    func returningEffect() async {
        let store = await TestSystem(
            initialState: Counter(),
            reduce: Counter.reduce,
            feedbacks: [.react(query: \.request) { request in .loaded(request * 10) }]
        )
        await store.send(.ask(4)) { $0.request = 4 }
        await store.receive(.loaded(40)) { $0.loaded = [40] }
        await store.finish()
    }

    @Test("a thrown error becomes the event that catch maps it to")
    func thrownErrorBecomesEvent() async {
        let store = await TestSystem(
            initialState: Counter(),
            reduce: Counter.reduce,
            feedbacks: [
                .react(
                    query: \.request,
                    effects: { (request: Int) async throws -> Counter.Event in
                        if request < 0 { throw LoadError(message: "negative \(request)") }
                        return .loaded(request)
                    }, catch: { error in .failed((error as? LoadError)?.message ?? "unknown") })
            ]
        )
        await store.send(.ask(-1)) { $0.request = -1 }
        await store.receive(.failed("negative -1")) { $0.errors = ["negative -1"] }
        await store.send(.ask(3)) { $0.request = 3 }
        await store.receive(.loaded(3)) { $0.loaded = [3] }
        await store.finish()
    }

    @Test("an effect that is a sequence sends each element, and its error through catch")
    func sequenceEffect() async {
        let store = await TestSystem(
            initialState: Counter(),
            reduce: Counter.reduce,
            feedbacks: [
                .react(
                    query: \.request,
                    effects: { (request: Int) in
                        AsyncThrowingStream<Counter.Event, any Error> { continuation in
                            for value in 0..<request { continuation.yield(.loaded(value)) }
                            continuation.finish(throwing: LoadError(message: "done"))
                        }
                    }, catch: { _ in .failed("stream ended") })
            ]
        )
        await store.send(.ask(2)) { $0.request = 2 }
        await store.receive(.loaded(0)) { $0.loaded = [0] }
        await store.receive(.loaded(1)) { $0.loaded = [0, 1] }
        await store.receive(.failed("stream ended")) { $0.errors = ["stream ended"] }
        await store.finish()
    }

    @Test("a request in the initial state starts its effect at once, as after a restore")
    func initialStateStartsEffects() async {
        let store = await TestSystem(
            initialState: Counter(request: 7),
            reduce: Counter.reduce,
            feedbacks: [.react(query: \.request) { request in .loaded(request) }]
        )
        await store.receive(.loaded(7)) { $0.loaded = [7] }
        await store.finish()
    }

    @Test("an effect that answers at once from a cache does not re-enter the reducer")
    func immediateAnswer() async {
        let store = await TestSystem(
            initialState: Counter(),
            reduce: Counter.reduce,
            feedbacks: [
                .react(query: { $0.request.map { $0 } }) { request in .loaded(request) },
                .react(query: { $0.loaded.last }) { last in last < 3 ? .ask(last + 1) : .failed("stop") },
            ]
        )
        await store.send(.ask(1)) { $0.request = 1 }
        await store.receive(.loaded(1)) { $0.loaded = [1] }
        await store.receive(.ask(2)) { $0.request = 2 }
        await store.receive(.loaded(2)) { $0.loaded = [1, 2] }
        await store.receive(.ask(3)) { $0.request = 3 }
        await store.receive(.loaded(3)) { $0.loaded = [1, 2, 3] }
        await store.receive(.failed("stop")) { $0.errors = ["stop"] }
        await store.finish()
    }
}

@Suite("react(queries:effects:)")
struct ReactSetTests {
    @Test("starts the new requests, keeps the unchanged, cancels the removed")
    func diffing() async {
        let started = Shared<[Int]>([])
        let cancelled = Shared<[Int]>([])
        let store = await TestSystem(
            initialState: Counter(),
            reduce: Counter.reduce,
            feedbacks: [
                .react(queries: \.requests) { request, _ in
                    started.update { $0.append(request) }
                    await waitForCancellation()
                    cancelled.update { $0.append(request) }
                }
            ]
        )
        await store.send(.askAll([1, 2])) { $0.requests = [1, 2] }
        #expect(Set(started.value) == [1, 2])
        await store.send(.askAll([2, 3])) { $0.requests = [2, 3] }
        #expect(started.value.sorted() == [1, 2, 3])
        #expect(cancelled.value == [1])
        await store.send(.askAll([])) { $0.requests = [] }
        #expect(cancelled.value.sorted() == [1, 2, 3])
        await store.finish()
    }

    @Test("one row per request: each effect delivers, a removed one never does")
    func rowsDeliverIndependently() async {
        let gates = Shared<[Int: CheckedContinuation<Void, Never>]>([:])
        let store = await TestSystem(
            initialState: Counter(),
            reduce: Counter.reduce,
            feedbacks: [
                .react(queries: \.requests) { (request: Int) async -> Counter.Event in
                    await withCheckedContinuation { continuation in
                        gates.update { $0[request] = continuation }
                    }
                    return .loaded(request)
                }
            ]
        )
        await store.send(.askAll([1, 2, 3])) { $0.requests = [1, 2, 3] }
        await store.send(.askAll([1, 3])) { $0.requests = [1, 3] }
        for request in [2, 3, 1] {
            gates.update { $0.removeValue(forKey: request) }?.resume()
            await store.settle()
        }
        await store.receive(.loaded(3)) { $0.loaded = [3] }
        await store.receive(.loaded(1)) { $0.loaded = [3, 1] }
        await store.finish()
    }

    @Test("thrown errors become events")
    func errors() async {
        let store = await TestSystem(
            initialState: Counter(),
            reduce: Counter.reduce,
            feedbacks: [
                .react(
                    queries: \.requests,
                    effects: { (request: Int) async throws -> Counter.Event in
                        throw LoadError(message: "row \(request)")
                    }, catch: { .failed(($0 as? LoadError)?.message ?? "?") })
            ]
        )
        await store.send(.askAll([5])) { $0.requests = [5] }
        await store.receive(.failed("row 5")) { $0.errors = ["row 5"] }
        await store.finish()
    }
}
