import StateLoop
import StateLoopSync
import StateLoopTesting
import TestSupport
import Testing

@Suite("RemoteResource", .timeLimit(.minutes(4)))
struct RemoteResourceTests {
    let clock = TestClock()
    let server = FakeServer()

    func makeResource() -> RemoteResource<String> {
        var policy = ResourcePolicy()
        policy.jitter = ResourcePolicy.noJitter
        policy.pollInterval = nil
        return RemoteResource(sources: server.sources, policy: policy, clock: clock)
    }

    @Test("a subscriber gets a loading status at once, then the value")
    func seedThenValue() async {
        let resource = makeResource()
        var updates = resource.updates().makeAsyncIterator()
        let seed = await updates.next()
        #expect(seed?.isLoading == true)
        #expect(seed?.value == nil)
        #expect(await eventually { server.waitingPulls == 1 })
        server.answer("hello", version: 1)
        var status = await updates.next()
        while status?.value == nil { status = await updates.next() }
        #expect(status?.value?.value == "hello")
        #expect(status?.isLoading == false)
    }

    @Test("stop() ends the request, the push channel and every subscriber's sequence at once, while the resource is still held")
    func stopWhileHeld() async {
        let resource = makeResource()
        let updates = resource.updates()
        let subscriber = Task {
            var count = 0
            for await _ in updates { count += 1 }
            return count
        }
        #expect(await eventually(within: .seconds(10)) { server.waitingPulls == 1 }, "the first subscriber pulls")
        resource.stop()
        #expect(await eventually(within: .seconds(10)) { server.waitingPulls == 0 }, "the request in flight is cancelled")
        let ended = await firstElement(
            of: AsyncStream<Int> { continuation in
                Task { continuation.yield(await subscriber.value) }
            }, within: .seconds(10)
        ) { _ in true }
        #expect(ended != nil, "the subscriber's sequence finishes")
        withExtendedLifetime(resource) {}
    }

    @Test("scenario 5: the last subscriber leaves mid-request, a new one joins within the grace period: one call, value replayed")
    func graceJoin() async {
        let resource = makeResource()
        let leaving = Task { for await _ in resource.updates() {} }
        #expect(await eventually { server.waitingPulls == 1 })
        leaving.cancel()
        await clock.waitForSleepers(3)  // the slow signal, the request's deadline, the grace period
        await clock.advance(by: .seconds(1))
        var joining = resource.updates().makeAsyncIterator()
        server.answer("shared", version: 1)
        var status = await joining.next()
        while status?.value == nil { status = await joining.next() }
        #expect(status?.value?.value == "shared")
        await clock.advance(by: .seconds(5))

        // A late subscriber, while another is still there, gets the value at once.
        var late = resource.updates().makeAsyncIterator()
        #expect(await late.next()?.value?.value == "shared")
        #expect(server.pullCount == 1)
        #expect(resource.requestsStarted == 1)
        _ = joining
    }

    @Test("after the grace period the request is dropped, and a new first subscriber fetches again")
    func graceExpires() async {
        let resource = makeResource()
        let leaving = Task { for await _ in resource.updates() {} }
        #expect(await eventually { server.waitingPulls == 1 })
        leaving.cancel()
        await clock.waitForSleepers(3)  // the slow signal, the request's deadline, the grace period
        await clock.advance(by: .seconds(2))
        #expect(await eventually { server.waitingPulls == 0 })
        var again = resource.updates().makeAsyncIterator()
        _ = await again.next()
        #expect(await eventually { server.pullCount == 2 })
    }

    @Test("scenario 8: 10,000 subscribers cause exactly one request")
    func tenThousandSubscribers() async {
        let resource = makeResource()
        var iterators = (0..<10_000).map { _ in resource.updates().makeAsyncIterator() }
        #expect(await eventually { server.waitingPulls == 1 })
        server.answer("one", version: 1)
        var received = 0
        for index in iterators.indices {
            var status = await iterators[index].next()
            while status?.value == nil { status = await iterators[index].next() }
            if status?.value?.value == "one" { received += 1 }
        }
        #expect(received == 10_000)
        #expect(server.pullCount == 1)
    }

    @Test("values emit each newer version once; outdated and repeated versions never")
    func valuesAreDistinctAndOrdered() async {
        let resource = makeResource()
        var values = resource.values().makeAsyncIterator()
        #expect(await eventually { server.waitingPulls == 1 })
        server.push("nine", version: 9)
        #expect(await values.next()?.version == Version(counter: 9))
        server.answer("eight", version: 8)
        server.push("nine again", version: 9)
        server.push("ten", version: 10)
        #expect(await values.next()?.value == "ten")
    }

    @Test("two resources combine into one screen state once both have a value")
    func combining() async {
        let driverServer = FakeServer()
        let rideServer = FakeServer()
        let driverMode = RemoteResource(sources: driverServer.sources, clock: clock)
        let ride = RemoteResource(sources: rideServer.sources, clock: clock)
        var screens = combineLatest(driverMode, ride) { mode, ride in "\(mode.value)/\(ride.value)" }.makeAsyncIterator()
        #expect(await eventually { driverServer.waitingPulls == 1 && rideServer.waitingPulls == 1 })
        driverServer.answer("driver", version: 1)
        rideServer.answer("none", version: 1)
        #expect(await screens.next() == "driver/none")
        rideServer.push("pending", version: 2)
        #expect(await screens.next() == "driver/pending")
        driverServer.push("passenger", version: 2)
        #expect(await screens.next() == "passenger/pending")
    }

    @MainActor
    @Test("a resource plugs into a system as a feedback")
    func asFeedback() async {
        let resource = makeResource()
        let system = System(
            initialState: [String](),
            reduce: { (names: inout [String], status: ResourceStatus<String>) in
                if let value = status.value?.value, names.last != value { names.append(value) }
            },
            feedbacks: [.resource(resource) { $0 }]
        )
        #expect(await eventually { server.waitingPulls == 1 })
        server.answer("first", version: 1)
        #expect(await eventually { system.state == ["first"] })
        server.push("second", version: 2)
        #expect(await eventually { system.state == ["first", "second"] })
        system.stop()
    }
}
