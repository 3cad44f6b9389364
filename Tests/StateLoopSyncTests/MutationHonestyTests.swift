import StateLoop
import StateLoopTesting
import Synchronization
import Testing

@testable import StateLoopSync

/// Mutations whose answers are lost, sessions the server forgot, sends that hang: the queue
/// must show each mutation once, send each once in order, and never drop one for a 401.
@Suite("optimistic mutations, honestly")
struct MutationHonestyTests {
    let clock = TestClock()
    let server = FakeMutationServer()
    let client = ClientID(rawValue: "c1")
    let statuses = AsyncStream.makeStream(of: ResourceStatus<[String]>.self)
    let unauthorizedReports = Counter()

    func makeStore(_ configure: (inout ResourcePolicy) -> Void = { _ in }) async -> TestSystem<Roster, Roster.Event> {
        var policy = ResourcePolicy()
        policy.jitter = ResourcePolicy.noJitter
        configure(&policy)
        let stream = statuses.stream
        let server = server
        let reports = unauthorizedReports
        let system = await TestSystem(
            initialState: Roster(client: client),
            reduce: Roster.reduce(policy: policy),
            feedbacks: Roster.feedbacks(
                send: { try await server.send($0, $1) },
                store: nil,
                policy: policy,
                clock: clock,
                now: wallClock(following: clock),
                statuses: { deliver in for await status in stream { await deliver(status) } },
                reportUnauthorized: { _ in reports.increment() }
            ),
            clock: clock
        )
        await system.setExhaustivity(.off)
        return system
    }

    func confirm(_ players: [String], version: UInt64, lastMutationID: UInt64? = nil, session: UInt64 = 0, unauthorized: Bool = false) {
        var status = ResourceStatus(value: Versioned(players, version: Version(counter: version), lastMutationID: lastMutationID))
        status.session = session
        if unauthorized {
            status.failure = ResourceFailure(HTTPStatusError(status: 401), kind: .unauthorized)
        }
        statuses.continuation.yield(status)
    }

    func mutation(_ name: String, _ sequence: UInt64) -> PendingMutation<RosterChange> {
        PendingMutation(.add(name), id: MutationID(client: client, sequence: sequence))
    }

    @Test("lastMutationID: an applied mutation whose answer was lost shows once when a value containing it arrives first")
    func lostAnswerShowsOnce() async {
        let store = await makeStore()
        confirm(["ann"], version: 1, lastMutationID: 0)
        await store.settle()
        await store.send(.mutate(mutation("bob", 1)))
        server.refuse(TransportError())  // the server applied it; the answer was lost
        await store.settle()
        #expect(await store.state.visible == ["ann", "bob"])
        confirm(["ann", "bob"], version: 2, lastMutationID: 1)
        await store.settle()
        #expect(await store.state.visible == ["ann", "bob"], "not [ann, bob, bob]")
        #expect(await store.state.queue.isEmpty)
        await clock.advance(by: .seconds(60))
        #expect(server.sent.count == 1, "nothing left to retry")
        await store.finish()
    }

    @Test("lastMutationID: a value that contains the mutation in flight drops it and cancels its send")
    func valueBeforeAcknowledgement() async {
        let store = await makeStore()
        confirm(["ann"], version: 1)
        await store.settle()
        await store.send(.mutate(mutation("bob", 1)))
        await store.send(.mutate(mutation("cid", 2)))
        #expect(server.inFlight == [.add("bob")])
        confirm(["ann", "bob"], version: 2, lastMutationID: 1)
        await store.settle()
        #expect(await store.state.visible == ["ann", "bob", "cid"])
        #expect(server.inFlight == [.add("cid")], "bob's send was cancelled; the next one goes at once")
        #expect(await store.state.queue.map(\.id) == [mutation("cid", 2).id])
        await store.finish()
    }

    @Test("lastMutationID: another client's number, or none, drops nothing of ours")
    func otherClientsNumber() async {
        let store = await makeStore()
        confirm(["ann"], version: 1)
        await store.settle()
        await store.send(.mutate(mutation("bob", 1)))
        await store.send(.mutate(PendingMutation(.add("dan"), id: MutationID(client: ClientID(rawValue: "c2"), sequence: 1))))
        confirm(["ann", "eve"], version: 2)
        await store.settle()
        #expect(await store.state.visible == ["ann", "eve", "bob", "dan"])
        await store.finish()
    }

    @Test("lastMutationID: a repeat of the confirmed version with a newer number still drops what it covers")
    func repeatedVersionNewerNumber() async {
        let store = await makeStore()
        confirm(["ann"], version: 1)
        await store.settle()
        await store.send(.mutate(mutation("ann", 1)))  // applied as a no-op on the server
        confirm(["ann"], version: 1, lastMutationID: 1)
        await store.settle()
        #expect(await store.state.queue.isEmpty)
        await store.finish()
    }

    @Test("unauthorized: a 401 on a mutation keeps it (unsent, pending), tells the resource, and sends it once after a new session")
    func unauthorizedMutationWaits() async {
        let store = await makeStore()
        confirm(["ann"], version: 1)
        await store.settle()
        let bob = mutation("bob", 1)
        await store.send(.mutate(bob))
        server.refuse(HTTPStatusError(status: 401))
        await store.settle()
        var state = await store.state
        #expect(state.visible == ["ann", "bob"])
        #expect(state.refusals.isEmpty, "a 401 is not the mutation's fault")
        #expect(state.queue.map(\.status) == [.pending])
        #expect(unauthorizedReports.value == 1)
        await store.send(.mutate(mutation("cid", 2)))
        await clock.advance(by: .seconds(600))
        #expect(server.sent == [bob.id], "nothing is sent in the old session")
        confirm(["ann"], version: 1, unauthorized: true)
        await store.settle()
        confirm(["ann"], version: 1, session: 1)
        await store.settle()
        #expect(server.sent == [bob.id, bob.id], "resent with its id")
        server.acknowledge(version: 2)
        await store.settle()
        #expect(server.sent.last == mutation("cid", 2).id)
        state = await store.state
        #expect(state.visible == ["ann", "bob", "cid"])
        await store.finish()
    }

    @Test(
        "unauthorized: a 401 that arrives after a new sign-in (the request left in the old session) sends the mutation again at once, with its id, instead of waiting for yet another sign-in"
    )
    func refusalOfAnEarlierSession() async {
        let store = await makeStore()
        confirm(["ann"], version: 1)
        await store.settle()
        let bob = mutation("bob", 1)
        await store.send(.mutate(bob))
        await store.settle()
        #expect(server.sent == [bob.id], "in flight in session 0")
        // Meanwhile the session is revoked and the user signs in again. The resource's statuses
        // reach the queue coalesced: the unauthorized one between may never be seen (had it
        // been, the request would have been cancelled).
        confirm(["ann"], version: 1, session: 1)
        await store.settle()
        // Only now does the old request's 401 arrive.
        server.refuse(HTTPStatusError(status: 401))
        await store.settle()
        #expect(server.sent == [bob.id, bob.id], "sent again in session 1, with its id")
        #expect(await store.state.blockedSession == nil)
        server.acknowledge(version: 2)
        await store.settle()
        #expect(await store.state.queue.map(\.status) == [.confirmed(Version(counter: 2))])
        await store.finish()
    }

    @Test("unauthorized: while the resource is unauthorized nothing is sent; mutations still show")
    func nothingSentWhileUnauthorized() async {
        let store = await makeStore()
        confirm(["ann"], version: 1, unauthorized: true)
        await store.settle()
        await store.send(.mutate(mutation("bob", 1)))
        #expect(await store.state.visible == ["ann", "bob"])
        #expect(server.sent.isEmpty)
        confirm(["ann"], version: 1, session: 1)
        await store.settle()
        #expect(server.sent.count == 1)
        await store.finish()
    }

    @Test("deadline: a send that hangs is given up after requestTimeout and retried with the same id")
    func hangingSendRetried() async {
        let store = await makeStore { $0.requestTimeout = .seconds(5) }
        confirm(["ann"], version: 1)
        await store.settle()
        let bob = mutation("bob", 1)
        await store.send(.mutate(bob))
        await clock.advance(by: .seconds(5))
        #expect(await store.state.attempt?.backoff == .seconds(1))
        await clock.advance(by: .seconds(1))
        #expect(server.sent == [bob.id, bob.id])
        await store.finish()
    }
}

/// A count shared with effects.
final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }

    @Test("failures published before anyone subscribes wait for the first subscriber, once; at most the newest 1,000")
    func undeliveredFailuresWait() async {
        let subscribers = Subscribers<Int>(replaysLatest: false, holdsUndelivered: true, bufferingPolicy: .unbounded)
        for value in 1...1_005 { subscribers.publish(value) }
        let first = subscribers.subscribe()
        subscribers.publish(2_000)  // someone listens now: delivered, not held
        let second = subscribers.subscribe()
        subscribers.finishAll()
        var firstSeen: [Int] = []
        for await value in first { firstSeen.append(value) }
        var secondSeen: [Int] = []
        for await value in second { secondSeen.append(value) }
        #expect(firstSeen == Array(6...1_005) + [2_000])
        #expect(secondSeen.isEmpty)
    }
}
