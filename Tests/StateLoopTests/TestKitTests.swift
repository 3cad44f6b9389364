import StateLoop
import StateLoopTesting
import Testing

/// A debounced search: the feature the test kit is checked against.
struct Search: Equatable, Sendable {
    var query = ""
    var pendingQuery: String?
    var results: [String] = []

    enum Event: Equatable, Sendable {
        case typed(String)
        case loaded([String])
    }

    static func reduce(_ state: inout Search, _ event: Event) {
        switch event {
        case .typed(let query):
            state.query = query
            state.pendingQuery = query.count >= 3 ? query : nil
        case .loaded(let results):
            state.results = results
            state.pendingQuery = nil
        }
    }

    static func feedbacks(clock: some Clock<Duration>) -> [Feedback<Search, Event>] {
        [
            .react(query: \.pendingQuery) { query in
                // Debounce: a new query cancels this sleep before it ends.
                try? await clock.sleep(for: .milliseconds(300))
                return .loaded(["\(query)1", "\(query)2"])
            }
        ]
    }
}

@Suite("test kit")
struct TestKitTests {
    @Test("a virtual clock drives a debounce without waiting")
    func debounceOnVirtualClock() async {
        let clock = TestClock()
        let store = await TestSystem(
            initialState: Search(),
            reduce: Search.reduce,
            feedbacks: Search.feedbacks(clock: clock),
            clock: clock
        )
        await store.send(.typed("swi")) {
            $0.query = "swi"
            $0.pendingQuery = "swi"
        }
        await clock.advance(by: .milliseconds(299))
        #expect(await store.unassertedEvents.isEmpty)
        await store.send(.typed("swif")) {
            $0.query = "swif"
            $0.pendingQuery = "swif"
        }
        await clock.advance(by: .milliseconds(299))
        await store.send(.typed("swift")) {
            $0.query = "swift"
            $0.pendingQuery = "swift"
        }
        await clock.advance(by: .milliseconds(300))
        await store.receive(.loaded(["swift1", "swift2"])) {
            $0.results = ["swift1", "swift2"]
            $0.pendingQuery = nil
        }
        #expect(clock.now == TestClock.Instant(offset: .milliseconds(898)))
        await store.finish()
    }

    @Test("advancing past several deadlines wakes each sleeper at its own time, in order")
    func advanceWakesInOrder() async {
        let clock = TestClock()
        let wakes = Shared<[Duration]>([])
        let store = await TestSystem(
            initialState: Counter(),
            reduce: Counter.reduce,
            feedbacks: [
                .react(query: \.request) { (request: Int) async -> Counter.Event in
                    for _ in 0..<3 {
                        try? await clock.sleep(for: .seconds(request))
                        wakes.update { $0.append(clock.now.offset) }
                    }
                    return .loaded(request)
                }
            ],
            clock: clock
        )
        await store.send(.ask(2)) { $0.request = 2 }
        await clock.advance(by: .seconds(10))
        #expect(wakes.value == [.seconds(2), .seconds(4), .seconds(6)])
        await store.receive(.loaded(2)) { $0.loaded = [2] }
        await store.finish()
    }

    @Test("a wrong expected state fails the step with a diff")
    func wrongStateFails() async {
        let store = await TestSystem(initialState: Counter(), reduce: Counter.reduce)
        await withKnownIssue {
            await store.send(.increment) { $0.count = 2 }
        }
        await store.finish()
    }

    @Test("an unasserted state change fails the step")
    func unassertedChangeFails() async {
        let store = await TestSystem(initialState: Counter(), reduce: Counter.reduce)
        await withKnownIssue {
            await store.send(.increment)
        }
        await store.finish()
    }

    @Test("an unexpected received event fails, and so does expecting one that never comes")
    func receiveMismatch() async {
        let store = await TestSystem(
            initialState: Counter(),
            reduce: Counter.reduce,
            feedbacks: [.react(query: \.request) { .loaded($0) }]
        )
        await store.send(.ask(1)) { $0.request = 1 }
        await withKnownIssue {
            await store.receive(.loaded(2)) { $0.loaded = [1] }
        }
        await withKnownIssue {
            await store.receive(.loaded(3))
        }
        await store.finish()
    }

    @Test("finishing with unasserted events or running effects fails, unless exhaustivity is off")
    func finishChecks() async {
        let store = await TestSystem(
            initialState: Counter(),
            reduce: Counter.reduce,
            feedbacks: [
                .react(query: \.request) { request, send in
                    await send(.loaded(request))
                    await waitForCancellation()
                }
            ]
        )
        await store.send(.ask(1)) { $0.request = 1 }
        await withKnownIssue {
            await store.send(.increment) { $0.count = 1 }
        }
        await store.send(.ask(2)) { $0.request = 2 }
        await withKnownIssue(isIntermittent: false) {
            await store.finish()
        } matching: { issue in
            issue.description.contains("not asserted") || issue.description.contains("still running")
        }

        let relaxed = await TestSystem(
            initialState: Counter(),
            reduce: Counter.reduce,
            feedbacks: [.react(query: \.request) { _, _ in await waitForCancellation() }]
        )
        await relaxed.setExhaustivity(.off)
        await relaxed.send(.ask(1))
        await relaxed.send(.increment) { $0.count = 1 }
        await relaxed.finish()
    }

    @Test("a sleep on the test clock is cancelled with its task")
    func sleepCancellation() async {
        let clock = TestClock()
        let task = Task { try await clock.sleep(for: .seconds(5)) }
        while clock.sleeperCount == 0 { await Task.yield() }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(clock.sleeperCount == 0)
    }
}

extension TestSystem {
    func setExhaustivity(_ exhaustivity: Exhaustivity) {
        self.exhaustivity = exhaustivity
    }
}
