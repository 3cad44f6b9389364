import StateLoop
import StateLoopTesting
import Testing

/// The README's test of a feature: compiled, and run.
@Suite("README: testing a feature")
struct ReadmeTesting {
    struct Search: Equatable, Sendable {
        var query = ""
        var results: [String] = []

        enum Event: Equatable, Sendable {
            case typed(String)
            case loaded([String])
        }

        static func reduce(_ state: inout Search, _ event: Event) {
            switch event {
            case .typed(let query): state.query = query
            case .loaded(let results): state.results = results
            }
        }

        /// Searches 300 ms after the last key, on `clock`.
        static func feedbacks(api: SearchAPI, clock: some Clock<Duration>) -> [Feedback<Search, Event>] {
            [
                .react(query: { $0.query.isEmpty ? nil : $0.query }) { query in
                    try? await clock.sleep(for: .milliseconds(300))
                    return .loaded(await api.search(query))
                }
            ]
        }
    }

    struct SearchAPI: Sendable {
        var search: @Sendable (String) async -> [String]
        static let fake = SearchAPI { [$0] }
    }

    // README.md:
    @Test func debouncedSearch() async {
        let clock = TestClock()
        let store = await TestSystem(
            initialState: Search(), reduce: Search.reduce,
            feedbacks: Search.feedbacks(api: .fake, clock: clock), clock: clock)
        await store.send(.typed("swift")) { $0.query = "swift" }
        await clock.advance(by: .milliseconds(300))
        await store.receive(.loaded(["swift"])) { $0.results = ["swift"] }
        await store.finish()
    }
    // End of the example.
}
