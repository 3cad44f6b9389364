import Foundation
import StateLoop
import StateLoopTesting
import TestSupport
import Testing

@testable import StateLoopSync

/// A key press taken into the state in the same step as it is queued (`System.mutate`), and the
/// order of an optimistic resource's statuses that keeps a late one from taking the screen back.
@Suite("Mutations shown in the same step", .timeLimit(.minutes(4)))
struct MutateInStepTests {
    struct Screen: Sendable {
        var roster = ResourceSnapshot<[String]>()
        /// Every value the state showed, in order.
        var shown: [[String]] = []
    }

    enum Event: Sendable {
        case roster(ResourceSnapshot<[String]>)
    }

    /// A roster following `["ann"]` (no polling, test clocks) whose server holds every mutation:
    /// they stay pending, so the queue alone decides what is shown.
    static func makeRoster() -> (OptimisticResource<RosterChange>, FakeMutationServer) {
        var policy = ResourcePolicy()
        policy.pollInterval = nil
        let players = RemoteResource(
            sources: ResourceSources(pull: { Versioned(["ann"], version: Version(counter: 1)) }),
            policy: policy,
            clock: TestClock()
        )
        let server = FakeMutationServer()
        let roster = OptimisticResource(resource: players, clock: TestClock()) { change, id in try await server.send(change, id) }
        return (roster, server)
    }

    static func reduce(_ state: inout Screen, _ event: Event) {
        switch event {
        case .roster(let latest):
            state.roster.update(to: latest)
            if let value = state.roster.value, state.shown.last != value { state.shown.append(value) }
        }
    }

    @MainActor
    @Test("each press reads the one before it from the state; a status published before a press and delivered after it never takes the screen back")
    func pressesReadTheState() async throws {
        let (roster, server) = Self.makeRoster()
        defer { roster.stop() }
        let shown: @Sendable (OptimisticStatus<RosterChange>) -> Event = { .roster(ResourceSnapshot($0)) }
        let system = System(initialState: Screen(), reduce: Self.reduce, feedbacks: [.resource(roster, event: shown)])
        defer { system.stop() }
        #expect(await eventually { system.state.roster.value == ["ann"] && !system.state.roster.health.isLoading }, "the first value")
        let before = try #require(roster.status)

        // Three presses in one batch, each naming the player after the count it reads.
        var ids: [MutationID] = []
        for _ in 0..<3 {
            let count = system.state.roster.value?.count ?? 0
            ids.append(system.mutate(roster, .add("p\(count)"), event: shown))
        }
        #expect(system.state.roster.value == ["ann", "p1", "p2", "p3"], "shown as the last press returned")
        #expect(system.state.roster.pendingMutations == 3)
        #expect(ids.map { $0.parts?.sequence } == [1, 2, 3])

        // The status from before the presses, delivered now: older, ignored.
        system.send(.roster(ResourceSnapshot(before)))
        #expect(system.state.roster.value == ["ann", "p1", "p2", "p3"])

        // The resource's own statuses catch up; the screen never showed less than the presses.
        #expect(await eventually { server.inFlight == [.add("p1")] }, "the first press sent")
        #expect(await eventually { roster.status?.position?.revision ?? 0 > before.position?.revision ?? 0 && roster.status?.mutations.count == 3 })
        #expect(await eventually { system.state.roster.position == roster.status?.position }, "the system has the resource's newest status")
        #expect(system.state.shown == [["ann"], ["ann", "p1"], ["ann", "p1", "p2"], ["ann", "p1", "p2", "p3"]])
        #expect(system.state.roster.pendingMutations == 3)
    }

    @Test("the status right after mutate holds the mutation, before the resource's machine took it: value, queue, delivery and position")
    func statusHoldsWhatWasQueued() async {
        let (roster, _) = Self.makeRoster()
        defer { roster.stop() }
        #expect(await eventually { roster.status?.value == ["ann"] && roster.status?.resource.isLoading == false })
        let before = roster.status!
        let id = roster.mutate(.add("bob"))
        let after = roster.status!
        #expect(after.value == ["ann", "bob"])
        #expect(after.mutations.map(\.id) == [id])
        #expect(after.delivery.count == 1)
        #expect(after.position?.lastQueued == 1 && after.position?.publisher == before.position?.publisher)
        #expect(before.position!.precedes(after.position!) && !after.position!.precedes(before.position!))
    }

    @Test("positions order the statuses of one resource by the queue they hold, then by publication; those of two resources are never ordered")
    func positionsOrder() {
        let mine = UUID()
        let theirs = UUID()
        let shown = StatusPosition(publisher: mine, lastQueued: 2, revision: 5)
        #expect(StatusPosition(publisher: mine, lastQueued: 1, revision: 9).precedes(shown), "fewer of the queue's mutations")
        #expect(StatusPosition(publisher: mine, lastQueued: 2, revision: 4).precedes(shown), "as many, published before")
        #expect(!StatusPosition(publisher: mine, lastQueued: 2, revision: 5).precedes(shown))
        #expect(!StatusPosition(publisher: mine, lastQueued: 3, revision: 1).precedes(shown))
        #expect(!StatusPosition(publisher: theirs, lastQueued: 0, revision: 0).precedes(shown), "another resource's (or launch's) status")

        let status = { (position: StatusPosition?, value: Bool) in
            var status = OptimisticStatus<Toggle>(value: value, confirmed: nil, mutations: [], resource: ResourceStatus(value: nil))
            status.position = position
            return ResourceSnapshot(status)
        }
        var snapshot = status(shown, true)
        snapshot.update(to: status(StatusPosition(publisher: mine, lastQueued: 1, revision: 6), false))
        #expect(snapshot.value == true, "an older status of the same resource is ignored")
        snapshot.update(to: status(StatusPosition(publisher: theirs, lastQueued: 0, revision: 1), false))
        #expect(snapshot.value == false, "another resource's status is taken")
        snapshot.update(to: status(nil, true))
        #expect(snapshot.value == true, "a status with no position is taken")
    }

    @Test("positions are encoded with the snapshot: replayed from JSON (a journal, a recorded session), a late status is ignored as it was live")
    func positionsReplay() throws {
        let publisher = UUID()
        let status = { (revision: UInt64, value: Bool) in
            var status = OptimisticStatus<Toggle>(value: value, confirmed: nil, mutations: [], resource: ResourceStatus(value: nil))
            status.position = StatusPosition(publisher: publisher, lastQueued: 1, revision: revision)
            return ResourceSnapshot(status)
        }
        let events = [status(5, true), status(4, false)]
        var live = ResourceSnapshot<Bool>()
        for event in events { live.update(to: event) }
        #expect(live.value == true, "the late status ignored, live")

        let encoder = JSONEncoder()
        let replayedEvents = try events.map { try JSONDecoder().decode(ResourceSnapshot<Bool>.self, from: encoder.encode($0)) }
        var replayed = ResourceSnapshot<Bool>()
        for event in replayedEvents { replayed.update(to: event) }
        #expect(replayed == live, "the replay decides as the live run did")
        #expect(try JSONDecoder().decode(ResourceSnapshot<Bool>.self, from: encoder.encode(live)) == live)
    }

    struct Toggle: Mutation {
        var on: Bool
        func apply(to value: inout Bool) { value = on }
    }
}
