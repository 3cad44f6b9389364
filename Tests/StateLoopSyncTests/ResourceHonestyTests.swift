import StateLoop
import StateLoopTesting
import Synchronization
import Testing

@testable import StateLoopSync

/// The ways a server can change under a resource without it noticing: hints that race a pull,
/// a network that flaps, a session the server forgot, a trickling answer, a version no server
/// can follow, a push that cannot be read. Each test fails on the machine without its rule.
@Suite("remote resource honesty")
struct ResourceHonestyTests {
    let clock = TestClock()
    let server = FakeServer()

    func makeStore(
        sources: ResourceSources<String>? = nil,
        _ configure: (inout ResourcePolicy) -> Void = { _ in }
    ) async -> TestSystem<Machine, Machine.Event> {
        var policy = ResourcePolicy()
        policy.jitter = ResourcePolicy.noJitter
        policy.pollInterval = nil
        configure(&policy)
        let store = await TestSystem(
            initialState: Machine(),
            reduce: Machine.reduce(policy: policy),
            feedbacks: Machine.feedbacks(sources: sources ?? server.sources, policy: policy, clock: clock),
            clock: clock
        )
        await store.setExhaustivity(.off)
        return store
    }

    /// Subscribes and answers the first pull with v19.
    func holdingV19() async -> TestSystem<Machine, Machine.Event> {
        let store = await makeStore()
        await store.send(.subscribed)
        server.answer("nineteen", version: 19)
        await store.settle()
        return store
    }

    @Test("hint rule: a hint during a pull that answers the old version pulls once more; many hints, one pull")
    func hintDuringPull() async {
        let store = await holdingV19()
        await store.send(.refresh)
        #expect(server.waitingPulls == 1)
        for _ in 0..<5 { server.pushHint() }
        await store.settle()
        #expect(server.pullCount == 2, "hints while a pull is in flight wait for it")
        server.answer("nineteen", version: 19)
        await store.settle()
        #expect(server.pullCount == 3, "the answer may predate the hint: one more pull")
        server.answer("twenty", version: 20)
        await store.settle()
        #expect(await store.state.value?.version == Version(counter: 20))
        #expect(server.pullCount == 3)
        await store.finish()
    }

    @Test("hint rule: connectivity coming back during a pull pulls once more after it")
    func onlineDuringPull() async {
        let store = await holdingV19()
        server.setOnline(false)
        await store.settle()
        await store.send(.refresh)
        server.setOnline(true)
        await store.settle()
        await clock.advance(by: .milliseconds(250))
        #expect(server.pullCount == 2)
        server.answer("nineteen", version: 19)
        await store.settle()
        #expect(server.pullCount == 3)
        server.answer("twenty", version: 20)
        await store.settle()
        #expect(server.pullCount == 3)
        await store.finish()
    }

    @Test("hint rule: a hint whose pull fails leaves it to the retry, not to an extra pull")
    func hintThenFailure() async {
        let store = await holdingV19()
        await store.send(.refresh)
        server.pushHint()
        await store.settle()
        server.fail(TransportError())
        await store.settle()
        #expect(server.pullCount == 2)
        await clock.advance(by: .seconds(1))
        #expect(server.pullCount == 3, "the retry covers the hint")
        server.answer("twenty", version: 20)
        await store.settle()
        #expect(server.pullCount == 3)
        await store.finish()
    }

    @Test(
        "hint rule: a hint during a retry's backoff pulls at once, and once that pull succeeds polling goes on (found by the chaos run: the stale retry stopped every poll)"
    )
    func hintDuringBackoff() async {
        let store = await makeStore { $0.pollInterval = .seconds(5) }
        await store.send(.subscribed)
        server.answer("nineteen", version: 19)
        await store.settle()
        await store.send(.refresh)
        server.fail(TransportError())
        await store.settle()
        #expect(await store.state.retry != nil, "a transient failure waits its backoff")
        server.pushHint()
        await store.settle()
        #expect(server.pullCount == 3, "the hint pulls without waiting out the backoff")
        #expect(await store.state.retry == nil, "the pull replaces the retry")
        await clock.advance(by: .seconds(1))
        #expect(server.pullCount == 3, "no retry of the failed pull on top of the hint's")
        server.answer("twenty", version: 20)
        await store.settle()
        await clock.advance(by: .seconds(5))
        #expect(server.pullCount == 4, "the poll runs 5 s after the last success")
        server.answer("twenty-one", version: 21)
        await store.settle()
        #expect(await store.state.value?.version == Version(counter: 21))
        await store.finish()
    }

    @Test("hint rule: a hint at the very moment the backoff ends leaves no retry behind a successful pull")
    func hintAsBackoffEnds() async {
        let store = await makeStore { $0.pollInterval = .seconds(5) }
        await store.send(.subscribed)
        server.answer("nineteen", version: 19)
        await store.settle()
        await store.send(.refresh)
        server.fail(TransportError())
        await store.settle()
        // The backoff's timer fires while the hint's pull is in flight: its `retryDue` finds a
        // request running.
        server.pushHint()
        await clock.advance(by: .seconds(1))
        await store.settle()
        server.answer("twenty", version: 20)
        await store.settle()
        #expect(await store.state.retry == nil)
        await clock.advance(by: .seconds(5))
        #expect(server.pullCount == 4, "polling goes on")
        await store.finish()
    }

    @Test("push rule: a push channel failing during a retry's backoff leaves the wait to the retry")
    func pushFailureDuringBackoff() async {
        let store = await makeStore()
        await store.send(.subscribed)
        server.answer("nineteen", version: 19)
        await store.settle()
        await store.send(.refresh)
        server.fail(TransportError())
        await store.settle()
        for _ in 0..<3 { server.pushFailure(TransportError()) }
        await store.settle()
        #expect(server.pullCount == 2, "a failing socket does not cut the backoff short")
        await clock.advance(by: .seconds(1))
        #expect(server.pullCount == 3, "the retry pulls when due")
        await store.finish()
    }

    @Test("flap rule: five offline/online flaps in a second, each with a reconnection hint, cost one pull")
    func flappingCostsOnePull() async {
        let store = await holdingV19()
        for _ in 0..<5 {
            server.setOnline(false)
            await store.settle()
            await clock.advance(by: .milliseconds(100))
            server.setOnline(true)
            server.pushHint()
            await store.settle()
            await clock.advance(by: .milliseconds(100))
            server.answerAll("nineteen", version: 19)  // a server that answers at once
            await store.settle()
        }
        await clock.advance(by: .seconds(1))
        server.answerAll("nineteen", version: 19)
        await store.settle()
        #expect(server.pullCount == 2, "the first pull, then one once the network settled")
        await clock.advance(by: .seconds(10))
        #expect(server.pullCount == 2)
        await store.finish()
    }

    @Test("flap rule: going offline again before the network settles starts nothing")
    func offlineBeforeSettling() async {
        let store = await holdingV19()
        server.setOnline(false)
        await store.settle()
        server.setOnline(true)
        await store.settle()
        await clock.advance(by: .milliseconds(200))
        server.setOnline(false)
        await store.settle()
        await clock.advance(by: .seconds(5))
        #expect(server.pullCount == 1)
        #expect(await store.state.status.isOffline)
        await store.finish()
    }

    @Test("unauthorized: a 401 pull stops retries and polls, is not offline, and a refresh starts a new session")
    func unauthorizedPull() async {
        let store = await makeStore { $0.pollInterval = .seconds(5) }
        await store.send(.subscribed)
        server.answer("one", version: 1)
        await store.settle()
        server.setOnline(false)
        await store.settle()
        await store.send(.refresh)
        server.fail(HTTPStatusError(status: 401))
        await store.settle()
        var status = await store.state.status
        #expect(status.isUnauthorized)
        #expect(status.isOffline == false, "the server answered: the network is up")
        #expect(status.value?.value == "one")
        await clock.advance(by: .seconds(600))
        #expect(server.pullCount == 2, "no retry, no poll")
        await store.send(.refresh)
        #expect(server.pullCount == 3)
        server.answer("two", version: 2)
        await store.settle()
        status = await store.state.status
        #expect(status.isUnauthorized == false)
        #expect(status.session == 1)
        await store.finish()
    }

    @Test("unauthorized: a refused push channel stops it (no reconnection loop) until a refresh")
    func unauthorizedPush() async {
        let starts = Mutex(0)
        let (pushes, push) = AsyncStream.makeStream(of: PushMessage<String>.self)
        var sources = server.sources
        sources.push = { receive in
            starts.withLock { $0 += 1 }
            for await message in pushes { await receive(message) }
        }
        let store = await makeStore(sources: sources)
        await store.send(.subscribed)
        server.answer("one", version: 1)
        await store.settle()
        #expect(starts.withLock { $0 } == 1)
        push.yield(.failed(HTTPStatusError(status: 403)))
        await store.settle()
        #expect(await store.state.status.isUnauthorized)
        push.yield(.changed)
        await store.settle()
        await clock.advance(by: .seconds(60))
        #expect(server.pullCount == 1, "a hint reaches nothing while unauthorized")
        #expect(starts.withLock { $0 } == 1)
        await store.send(.refresh)
        #expect(starts.withLock { $0 } == 2, "the push channel restarts with the new session")
        server.answer("two", version: 2)
        await store.settle()
        await store.finish()
    }

    @Test("deadline: a trickling answer is given up after requestTimeout and retried; its late answer never lands")
    func requestDeadline() async {
        let store = await makeStore { $0.requestTimeout = .seconds(10) }
        await store.send(.subscribed)
        await store.send(.refresh)  // joins the request in flight
        await clock.advance(by: .seconds(10))
        #expect(server.waitingPulls == 0, "the request was cancelled")
        let state = await store.state
        #expect(state.fetch == nil)
        #expect(state.retry?.attempt == 1)
        await clock.advance(by: .seconds(1))
        #expect(server.pullCount == 2)
        server.answer("one", version: 1)
        await store.settle()
        #expect(await store.state.value?.value == "one")
        await store.finish()
    }

    @Test("a version no server can follow is refused with a typed error, by pull and by push")
    func unfollowableVersion() async {
        let store = await makeStore()
        await store.send(.subscribed)
        server.answer("stuck", version: .max)
        await store.settle()
        var state = await store.state
        #expect(state.value == nil)
        #expect(state.failure?.underlying is UnfollowableVersionError)
        #expect(state.failure?.kind == .unrecoverable)
        await store.send(.refresh)
        server.answer("one", version: 1)
        await store.settle()
        server.push("stuck", version: .max)
        await store.settle()
        state = await store.state
        #expect(state.value?.value == "one")
        #expect(state.pushFailure?.underlying is UnfollowableVersionError)
        server.push("two", version: 2)
        await store.settle()
        state = await store.state
        #expect(state.value?.value == "two")
        #expect(state.pushFailure == nil)
        await store.finish()
    }

    @Test("an unreadable push is reported and pulled instead")
    func unreadablePush() async {
        let store = await holdingV19()
        server.pushFailure(TransportError())
        await store.settle()
        #expect(await store.state.pushFailure != nil)
        #expect(server.pullCount == 2)
        server.answer("twenty", version: 20)
        await store.settle()
        #expect(await store.state.value?.version == Version(counter: 20))
        await store.finish()
    }

    @Test("status noise: a dropped push wakes no subscriber")
    func droppedPushIsSilent() async {
        let subscribers = ResourceSubscribers<String>(commands: AsyncStream.makeStream(of: Machine.Event.self).1)
        var machine = Machine()
        machine.apply(.pushed(.value(Versioned("five", version: Version(counter: 5)))), policy: ResourcePolicy())
        #expect(subscribers.publish(machine))
        machine.apply(.pushed(.value(Versioned("five", version: Version(counter: 5)))), policy: ResourcePolicy())
        machine.apply(.pushed(.value(Versioned("four", version: Version(counter: 4)))), policy: ResourcePolicy())
        #expect(machine.outdatedDropped == 2)
        #expect(subscribers.publish(machine) == false)
        machine.apply(.pushed(.value(Versioned("six", version: Version(counter: 6)))), policy: ResourcePolicy())
        #expect(subscribers.publish(machine))
    }

    @Test("a repeated version with a newer lastMutationID updates the held value's, and only that")
    func repeatedVersionBringsLastMutationID() async {
        var machine = Machine()
        let policy = ResourcePolicy()
        machine.apply(.pushed(.value(Versioned("a", version: Version(counter: 3), lastMutationID: 1))), policy: policy)
        machine.apply(.pushed(.value(Versioned("a", version: Version(counter: 3), lastMutationID: 4))), policy: policy)
        #expect(machine.value?.lastMutationID == 4)
        machine.apply(.pushed(.value(Versioned("a", version: Version(counter: 3), lastMutationID: 2))), policy: policy)
        #expect(machine.value?.lastMutationID == 4)
    }
}
