import StateLoop
import StateLoopTesting
import Testing

@testable import StateLoopSync

typealias Machine = ResourceMachine<String>

/// The resource's logic, driven by a scripted server on a virtual clock.
@Suite("remote resource logic")
struct ResourceMachineTests {
    let clock = TestClock()
    let server = FakeServer()

    func makeStore(_ configure: (inout ResourcePolicy) -> Void = { _ in }) async -> TestSystem<Machine, Machine.Event> {
        var policy = ResourcePolicy()
        policy.jitter = ResourcePolicy.noJitter
        configure(&policy)
        let store = await TestSystem(
            initialState: Machine(),
            reduce: Machine.reduce(policy: policy),
            feedbacks: Machine.feedbacks(sources: server.sources, policy: policy, clock: clock),
            clock: clock
        )
        await store.setExhaustivity(.off)
        return store
    }

    @Test("scenario 1: the pull's v8 arriving after the push's v9 changes nothing")
    func pullOlderThanPush() async {
        let store = await makeStore()
        await store.send(.subscribed)
        #expect(server.waitingPulls == 1)
        server.push("nine", version: 9)
        await store.settle()
        #expect(await store.state.value?.version == Version(counter: 9))
        server.answer("eight", version: 8)
        await store.settle()
        let state = await store.state
        #expect(state.value == Versioned("nine", version: Version(counter: 9)))
        #expect(state.outdatedDropped == 1)
        #expect(state.fetch == nil)
        await store.finish()
    }

    @Test("scenario 2: a manual refresh during a poll joins it; a late answer of a dropped request never lands")
    func refreshJoinsPoll() async {
        let store = await makeStore { $0.pollInterval = .seconds(60) }
        await store.send(.subscribed)
        server.answer("one", version: 1)
        await store.settle()
        await clock.advance(by: .seconds(60))
        #expect(server.waitingPulls == 1)
        await store.send(.refresh)
        #expect(server.pullCount == 2)
        #expect(await store.state.requestsStarted == 2)
        server.answer("three", version: 3)
        await store.settle()
        #expect(await store.state.value?.version == Version(counter: 3))

        // The next poll's request is dropped (everyone left, grace expired) and a new one
        // starts; the two answers arrive newest first.
        await clock.advance(by: .seconds(60))
        await store.send(.unsubscribed)
        await clock.advance(by: .seconds(2))
        await store.send(.subscribed)
        #expect(server.waitingPulls == 1)
        server.answer("five", version: 5)
        await store.settle()
        #expect(await store.state.value?.value == "five")
        await store.finish()
    }

    @Test("scenario 3: a push of v9, then the pull in flight fails: no error over the fresher value, no retry")
    func failureAfterFresherPush() async {
        let store = await makeStore()
        await store.send(.subscribed)
        server.push("nine", version: 9)
        await store.settle()
        server.fail(HTTPStatusError(status: 503))
        await store.settle()
        let state = await store.state
        #expect(state.failure == nil)
        #expect(state.retry == nil)
        #expect(state.value?.value == "nine")
        await clock.advance(by: .seconds(30))
        #expect(server.pullCount == 1)
        await store.finish()
    }

    @Test("scenario 4: offline during a backoff wait uses up no attempt; back online, exactly one request")
    func offlineDuringBackoff() async {
        let store = await makeStore { $0.pollInterval = nil }
        await store.send(.subscribed)
        server.fail(TransportError())
        await store.settle()
        #expect(await store.state.retry == Machine.RetryWait(attempt: 1, delay: .seconds(1)))
        server.setOnline(false)
        await store.settle()
        await clock.advance(by: .seconds(120))
        #expect(server.pullCount == 1)
        #expect(await store.state.retry?.attempt == 1)
        server.setOnline(true)
        await store.settle()
        await clock.advance(by: .milliseconds(250))  // the network settles
        #expect(server.pullCount == 2)
        #expect(await store.state.fetch?.attempt == 1)
        await clock.advance(by: .seconds(20))
        #expect(server.pullCount == 2)
        server.answer("back", version: 1)
        await store.settle()
        #expect(await store.state.status.isOffline == false)
        await store.finish()
    }

    @Test("scenario 6: a 404 stops polling until a manual refresh")
    func notFoundStopsPolling() async {
        let store = await makeStore { $0.pollInterval = .seconds(10) }
        await store.send(.subscribed)
        server.answer("one", version: 1)
        await store.settle()
        await clock.advance(by: .seconds(10))
        server.fail(HTTPStatusError(status: 404))
        await store.settle()
        #expect(await store.state.failure?.kind == .unrecoverable)
        await clock.advance(by: .seconds(600))
        #expect(server.pullCount == 2)
        await store.send(.refresh)
        #expect(server.pullCount == 3)
        server.answer("two", version: 2)
        await store.settle()
        #expect(await store.state.failure == nil)
        await clock.advance(by: .seconds(10))
        #expect(server.pullCount == 4)
        server.answer("two", version: 2)
        await store.send(.unsubscribed)
        await store.finish()
    }

    @Test("scenario 6: a 429 with Retry-After 10 s waits exactly 10 s")
    func retryAfterHonoured() async {
        let store = await makeStore { $0.pollInterval = nil }
        await store.send(.subscribed)
        server.fail(HTTPStatusError(status: 429, retryAfter: .seconds(10)))
        await store.settle()
        await clock.advance(by: .milliseconds(9_999))
        #expect(server.pullCount == 1)
        await clock.advance(by: .milliseconds(1))
        #expect(server.pullCount == 2)
        server.answer("ok", version: 1)
        await store.settle()
        await store.finish()
    }

    @Test("transient failures retry with doubling backoff, then give up and stop polling")
    func retriesThenGivesUp() async {
        let store = await makeStore { $0.pollInterval = .seconds(5) }
        await store.send(.subscribed)
        for (retry, backoff) in [(1, 1), (2, 2), (3, 4)] {
            server.fail(HTTPStatusError(status: 500))
            await store.settle()
            #expect(await store.state.retry == Machine.RetryWait(attempt: retry, delay: .seconds(backoff)))
            await clock.advance(by: .seconds(backoff) - .milliseconds(1))
            #expect(server.pullCount == retry)
            await clock.advance(by: .milliseconds(1))
            #expect(server.pullCount == retry + 1)
        }
        server.fail(HTTPStatusError(status: 500))
        await store.settle()
        #expect(server.pullCount == 4)
        #expect(await store.state.failure?.message == "HTTP 500")
        await clock.advance(by: .seconds(100))
        #expect(server.pullCount == 4)
        await store.finish()
    }

    @Test("polling is counted from the last success, a push included, and never overlaps a request")
    func pollingFromLastSuccess() async {
        let store = await makeStore { $0.pollInterval = .seconds(10) }
        await store.send(.subscribed)
        await clock.advance(by: .seconds(29))
        #expect(server.pullCount == 1)
        server.answer("one", version: 1)
        await store.settle()
        await clock.advance(by: .seconds(7))
        server.push("two", version: 2)
        await store.settle()
        await clock.advance(by: .seconds(7))
        #expect(server.pullCount == 1)
        await clock.advance(by: .seconds(3))
        #expect(server.pullCount == 2)
        server.answer("two", version: 2)
        await store.send(.unsubscribed)
        await store.finish()
    }

    @Test("a slow request is reported after the threshold and cleared when it settles")
    func slowSignal() async {
        let store = await makeStore()
        await store.send(.subscribed)
        await clock.advance(by: .milliseconds(2_999))
        #expect(await store.state.isSlow == false)
        await clock.advance(by: .milliseconds(1))
        #expect(await store.state.status.isSlow)
        server.answer("late", version: 1)
        await store.settle()
        #expect(await store.state.status.isSlow == false)
        await store.send(.unsubscribed)
        await store.finish()
    }

    @Test("an older or repeated push neither makes a failing request moot nor restarts the poll timer")
    func stalePushIsNotARefresh() async {
        let store = await makeStore { $0.pollInterval = .seconds(10) }
        await store.send(.subscribed)
        server.answer("five", version: 5)
        await store.settle()
        await clock.advance(by: .seconds(6))
        server.push("five again", version: 5)
        server.push("four", version: 4)
        await store.settle()
        await clock.advance(by: .seconds(4))
        #expect(server.pullCount == 2)
        server.push("three", version: 3)
        await store.settle()
        server.fail(HTTPStatusError(status: 503))
        await store.settle()
        #expect(await store.state.retry?.attempt == 1)
        await store.send(.unsubscribed)
        await store.finish()
    }

    @Test("a push hint pulls; an epoch change re-bootstraps the value")
    func hintAndEpoch() async {
        let store = await makeStore { $0.pollInterval = nil }
        await store.send(.subscribed)
        server.answer("old", version: 40)
        await store.settle()
        server.pushHint()
        await store.settle()
        #expect(server.pullCount == 2)
        server.answer("restored", version: 3, epoch: 1)
        await store.settle()
        #expect(await store.state.value?.version == Version(epoch: 1, counter: 3))
        await store.finish()
    }
}

extension TestSystem {
    func setExhaustivity(_ exhaustivity: Exhaustivity) {
        self.exhaustivity = exhaustivity
    }
}
