import StateLoopSync
import StateLoopTesting
import Testing

@Suite("OptimisticResource", .timeLimit(.minutes(1)))
struct OptimisticResourceTests {
    @Test("the seed's players list: a rejected add disappears with an error; another client's add stays")
    func playersList() async {
        let (pushes, push) = AsyncStream.makeStream(of: PushMessage<[String]>.self)
        var policy = ResourcePolicy()
        policy.pollInterval = nil
        let players = RemoteResource(
            sources: ResourceSources(pull: { Versioned(["ann"], version: Version(counter: 1)) }, push: pushes),
            policy: policy,
            clock: TestClock()
        )
        let server = FakeMutationServer()
        let roster = OptimisticResource(resource: players, clock: TestClock()) { change, id in
            try await server.send(change, id)
        }
        var updates = roster.updates().makeAsyncIterator()
        var failures = roster.failures().makeAsyncIterator()
        var status = await updates.next()
        while status?.value != ["ann"] { status = await updates.next() }

        let bob = roster.mutate(.add("bob"))
        while status?.value != ["ann", "bob"] { status = await updates.next() }
        #expect(status?.mutations.map(\.id) == [bob])

        push.yield(.value(Versioned(["ann", "cid"], version: Version(counter: 2))))
        while status?.value != ["ann", "cid", "bob"] { status = await updates.next() }

        #expect(await eventually { server.inFlight == [.add("bob")] })
        server.reject()
        let failure = await failures.next()
        #expect(failure?.id == bob)
        #expect(failure?.mutation == .add("bob"))
        while status?.value != ["ann", "cid"] { status = await updates.next() }
        #expect(status?.mutations.isEmpty == true)
        _ = players
    }
}
