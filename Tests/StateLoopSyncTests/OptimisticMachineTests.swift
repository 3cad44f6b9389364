import StateLoop
import StateLoopTesting
import Synchronization
import Testing

@testable import StateLoopSync

/// The seed's players list.
enum RosterChange: Mutation, Equatable {
    case add(String)
    case remove(String)

    func apply(to players: inout [String]) {
        switch self {
        case .add(let name): players.append(name)
        case .remove(let name): players.removeAll { $0 == name }
        }
    }
}

/// A scripted mutation endpoint: each send waits until the test answers it.
final class FakeMutationServer: Sendable {
    private let waiting = Mutex<[(id: MutationID, change: RosterChange, answer: CheckedContinuation<Version, any Error>)]>([])
    private let log = Mutex<[MutationID]>([])

    /// Waits for the test's answer; a cancelled send (its deadline passed, or it was dropped)
    /// leaves the waiting list at once.
    func send(_ change: RosterChange, _ id: MutationID) async throws -> Version {
        log.withLock { $0.append(id) }
        let token = UInt64.random(in: 0 ... .max)
        let tagged = MutationID(rawValue: "\(id.rawValue)#\(token)")
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                waiting.withLock { $0.append((tagged, change, continuation)) }
            }
        } onCancel: {
            let cancelled = waiting.withLock { list -> CheckedContinuation<Version, any Error>? in
                guard let index = list.firstIndex(where: { $0.id == tagged }) else { return nil }
                return list.remove(at: index).answer
            }
            cancelled?.resume(throwing: CancellationError())
        }
    }

    var sent: [MutationID] { log.withLock { $0 } }
    var inFlight: [RosterChange] { waiting.withLock { $0.map(\.change) } }

    func acknowledge(version: UInt64) {
        waiting.withLock { $0.isEmpty ? nil : $0.removeFirst() }?.answer.resume(returning: Version(counter: version))
    }

    func refuse(_ error: any Error = HTTPStatusError(status: 409)) {
        waiting.withLock { $0.isEmpty ? nil : $0.removeFirst() }?.answer.resume(throwing: error)
    }
}

typealias Roster = OptimisticMachine<RosterChange>

@Suite("optimistic mutations")
struct OptimisticMachineTests {
    let clock = TestClock()
    let server = FakeMutationServer()
    let confirmed = AsyncStream.makeStream(of: Versioned<[String]>.self)

    func makeStore(store: (any MutationStore<RosterChange>)? = nil) async -> TestSystem<Roster, Roster.Event> {
        var policy = ResourcePolicy()
        policy.jitter = ResourcePolicy.noJitter
        let values = confirmed.stream
        let server = server
        let system = await TestSystem(
            initialState: Roster(),
            reduce: Roster.reduce(policy: policy),
            feedbacks: Roster.feedbacks(
                send: { try await server.send($0, $1) },
                store: store,
                policy: policy,
                clock: clock,
                now: wallClock(following: clock),
                statuses: { deliver in for await value in values { await deliver(ResourceStatus(value: value)) } }
            ),
            clock: clock
        )
        await system.setExhaustivity(.off)
        return system
    }

    func confirm(_ players: [String], version: UInt64) {
        confirmed.continuation.yield(Versioned(players, version: Version(counter: version)))
    }

    @Test("scenario 1: a push from another client while a mutation is pending shows the new value with the mutation on top")
    func pushRebasesPending() async {
        let store = await makeStore()
        confirm(["ann"], version: 1)
        await store.settle()
        await store.send(.mutate(PendingMutation(.add("bob"))))
        #expect(await store.state.visible == ["ann", "bob"])
        confirm(["ann", "cid"], version: 2)
        await store.settle()
        #expect(await store.state.visible == ["ann", "cid", "bob"])
        server.acknowledge(version: 3)
        await store.settle()
        confirm(["ann", "cid", "bob"], version: 3)
        await store.settle()
        #expect(await store.state.queue.isEmpty)
        #expect(await store.state.visible == ["ann", "cid", "bob"])
        await store.finish()
    }

    @Test("scenario 2 and 4: of two mutations, the refused first one disappears with an error; the second and another client's change stay")
    func refusalRemovesOnlyThatMutation() async {
        let store = await makeStore()
        confirm(["ann"], version: 1)
        await store.settle()
        let first = PendingMutation(RosterChange.add("bob"))
        await store.send(.mutate(first))
        await store.send(.mutate(PendingMutation(.add("dan"))))
        #expect(await store.state.visible == ["ann", "bob", "dan"])
        #expect(server.inFlight == [.add("bob")])
        confirm(["ann", "eve"], version: 2)
        await store.settle()
        server.refuse()
        await store.settle()
        let state = await store.state
        #expect(state.visible == ["ann", "eve", "dan"])
        #expect(state.refusals.map(\.id) == [first.id])
        #expect(state.refusals.first?.error.message == "HTTP 409")
        #expect(server.inFlight == [.add("dan")])
        server.acknowledge(version: 3)
        confirm(["ann", "eve", "dan"], version: 3)
        await store.settle()
        #expect(await store.state.visible == ["ann", "eve", "dan"])
        await store.finish()
    }

    @Test("scenario 3: acknowledged at v15, a poll's v14 landing after it: the change stays visible throughout")
    func noFlickerAfterAcknowledgement() async {
        let store = await makeStore()
        confirm(["ann"], version: 13)
        await store.settle()
        await store.send(.mutate(PendingMutation(.add("bob"))))
        server.acknowledge(version: 15)
        await store.settle()
        #expect(await store.state.visible == ["ann", "bob"])
        confirm(["ann"], version: 14)
        await store.settle()
        #expect(await store.state.visible == ["ann", "bob"])
        #expect(await store.state.queue.count == 1)
        confirm(["ann", "bob"], version: 15)
        await store.settle()
        #expect(await store.state.visible == ["ann", "bob"])
        #expect(await store.state.queue.isEmpty)
        await store.finish()
    }

    @Test("scenario 5: 1,000 mutations queued while the server is slow are sent one at a time, in order, all confirmed")
    func thousandInOrder() async {
        let store = await makeStore()
        confirm([], version: 1)
        await store.settle()
        let mutations = (0..<1_000).map { PendingMutation(RosterChange.add("p\($0)")) }
        for mutation in mutations {
            await store.send(.mutate(mutation))
        }
        #expect(await store.state.visible?.count == 1_000)
        for index in 0..<1_000 {
            #expect(server.inFlight.count == 1)
            server.acknowledge(version: UInt64(index + 2))
            await store.settle()
        }
        #expect(server.sent == mutations.map(\.id))
        confirm(mutations.map { name in if case .add(let n) = name.mutation { n } else { "" } }, version: 1_001)
        await store.settle()
        #expect(await store.state.queue.isEmpty)
        #expect(await store.state.visible?.count == 1_000)
        await store.finish()
    }

    @Test("a transient failure is retried with the same mutation id; the stored queue is restored and saved")
    func retryWithSameIDAndPersistence() async {
        let mutation = PendingMutation(RosterChange.add("zoe"))
        let saved = InMemoryMutationStore([mutation])
        let store = await makeStore(store: saved)
        confirm(["ann"], version: 1)
        await store.settle()
        // Queued by an earlier launch, whose store kept no value: the server's value may hold
        // it already, so it shows once its answer says where it stands, never twice.
        #expect(await store.state.visible == ["ann"])
        server.refuse(HTTPStatusError(status: 503))
        await store.settle()
        await clock.advance(by: .seconds(1))
        #expect(server.sent == [mutation.id, mutation.id])
        server.acknowledge(version: 2)
        await store.settle()
        #expect(await store.state.visible == ["ann", "zoe"], "applied at 2, after the value shown: on top until a value holds it")
        #expect(await saved.load().map(\.status) == [.confirmed(Version(counter: 2))])
        confirm(["ann", "zoe"], version: 2)
        await store.settle()
        #expect(await saved.load().isEmpty)
        await store.finish()
    }
}
