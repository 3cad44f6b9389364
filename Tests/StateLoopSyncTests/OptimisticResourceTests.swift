import StateLoop
import StateLoopSync
import StateLoopTesting
import TestSupport
import Testing

@Suite("OptimisticResource", .timeLimit(.minutes(4)))
struct OptimisticResourceTests {
    @Test("the seed's players list: a refused add disappears with an error; another client's add stays")
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
        var failures = roster.refusals().makeAsyncIterator()
        var status = await updates.next()
        while status?.value != ["ann"] { status = await updates.next() }

        let bob = roster.mutate(.add("bob"))
        while status?.value != ["ann", "bob"] { status = await updates.next() }
        #expect(status?.mutations.map(\.id) == [bob])

        push.yield(.value(Versioned(["ann", "cid"], version: Version(counter: 2))))
        while status?.value != ["ann", "cid", "bob"] { status = await updates.next() }

        #expect(await eventually { server.inFlight == [.add("bob")] })
        server.refuse()
        let failure = await failures.next()
        #expect(failure?.id == bob)
        #expect(failure?.mutation == .add("bob"))
        while status?.value != ["ann", "cid"] { status = await updates.next() }
        #expect(status?.mutations.isEmpty == true)
        _ = players
    }

    @MainActor
    @Test("an optimistic resource plugs into a system: every status and every refusal become events")
    func asFeedback() async {
        var policy = ResourcePolicy()
        policy.pollInterval = nil
        let players = RemoteResource(
            sources: ResourceSources(pull: { Versioned(["ann"], version: Version(counter: 1)) }),
            policy: policy,
            clock: TestClock()
        )
        let server = FakeMutationServer()
        let roster = OptimisticResource(resource: players, clock: TestClock()) { change, id in
            try await server.send(change, id)
        }
        enum Event: Sendable {
            case shown([String])
            case refused(MutationID)
        }
        struct Screen: Sendable { var shown: [[String]] = [], refused: [MutationID] = [] }
        let system = System(
            initialState: Screen(),
            reduce: { (state: inout Screen, event: Event) in
                switch event {
                case .shown(let value): if state.shown.last != value { state.shown.append(value) }
                case .refused(let id): state.refused.append(id)
                }
            },
            feedbacks: [
                .resource(roster) { .shown($0.value ?? []) },
                .refusals(of: roster) { .refused($0.id) },
            ]
        )
        #expect(await eventually { system.state.shown.last == ["ann"] })
        let bob = roster.mutate(.add("bob"))
        #expect(await eventually { system.state.shown.last == ["ann", "bob"] })
        #expect(await eventually { server.inFlight == [.add("bob")] })
        server.refuse()
        #expect(await eventually { system.state.refused == [bob] && system.state.shown.last == ["ann"] })
        system.stop()
        _ = players
    }
}
