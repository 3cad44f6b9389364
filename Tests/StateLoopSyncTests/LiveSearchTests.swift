import StateLoop
import StateLoopSync
import StateLoopTesting
import Synchronization
import Testing

struct Destinations: Equatable, Sendable {
    var search = SearchState<[String]>(minimumLength: 3)

    enum Event: Equatable, Sendable {
        case search(SearchEvent<[String]>)
    }

    static func reduce(_ state: inout Destinations, _ event: Event) {
        switch event {
        case .search(let event): state.search.apply(event)
        }
    }
}

@Suite("live search")
struct LiveSearchTests {
    @Test("scenario 7: three characters typed inside the debounce window request only the last query; a late answer of an earlier one never shows")
    func debounceAndLatestOnly() async {
        let clock = TestClock()
        let requested = Mutex<[String]>([])
        let gates = Mutex<[String: CheckedContinuation<Void, Never>]>([:])
        let store = await TestSystem(
            initialState: Destinations(),
            reduce: Destinations.reduce,
            feedbacks: [
                .liveSearch(\.search, event: Destinations.Event.search, clock: clock) { query in
                    requested.withLock { $0.append(query) }
                    await withCheckedContinuation { continuation in
                        gates.withLock { $0[query] = continuation }
                    }
                    return ["\(query) street"]
                }
            ],
            clock: clock
        )
        await store.setExhaustivity(.off)
        await store.send(.search(.typed("opé")))
        await clock.advance(by: .milliseconds(100))
        await store.send(.search(.typed("oper")))
        await clock.advance(by: .milliseconds(100))
        await store.send(.search(.typed("opera")))
        await clock.advance(by: .milliseconds(300))
        #expect(requested.withLock { $0 } == ["opera"])
        gates.withLock { $0.removeValue(forKey: "opera") }?.resume()
        await store.settle()
        #expect(await store.state.search.results == ["opera street"])

        // The next query is in flight when the user types again: its answer arrives late.
        await store.send(.search(.typed("operator")))
        await clock.advance(by: .milliseconds(300))
        #expect(await store.state.search.results == ["opera street"])
        #expect(await store.state.search.isSearching)
        await store.send(.search(.typed("opal")))
        gates.withLock { $0.removeValue(forKey: "operator") }?.resume()
        await store.settle()
        #expect(await store.state.search.results == ["opera street"])
        await clock.advance(by: .milliseconds(300))
        gates.withLock { $0.removeValue(forKey: "opal") }?.resume()
        await store.settle()
        #expect(await store.state.search.results == ["opal street"])
        #expect(requested.withLock { $0 } == ["opera", "operator", "opal"])
        await store.finish()
    }

    @Test("queries below the minimum length are not searched, and previous results stay")
    func minimumLength() async {
        let clock = TestClock()
        let store = await TestSystem(
            initialState: Destinations(),
            reduce: Destinations.reduce,
            feedbacks: [.liveSearch(\.search, event: Destinations.Event.search, clock: clock) { [$0] }],
            clock: clock
        )
        await store.setExhaustivity(.off)
        await store.send(.search(.typed("par")))
        await clock.advance(by: .seconds(1))
        await store.send(.search(.typed("pa")))
        await clock.advance(by: .seconds(1))
        #expect(await store.state.search.results == ["par"])
        #expect(await store.state.search.isSearching == false)
        await store.finish()
    }
}
