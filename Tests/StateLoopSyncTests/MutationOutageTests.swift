import Foundation
import StateLoop
import StateLoopTesting
import Synchronization
import Testing

@testable import StateLoopSync

/// A mutation endpoint that is up, away (connection refused), failing with a status, or asking
/// for a new sign-in, and that applies each mutation id once, as the kit does.
final class OutageServer: Sendable {
    enum Mode: Sendable {
        case up
        case away
        case failing(Int)
        /// Applies each mutation, and the answer is lost on the way back.
        case losesAnswers
    }

    private struct State {
        var mode = Mode.away
        var attempts: [MutationID] = []
        var applied: [MutationID: UInt64] = [:]
        var order: [MutationID] = []
        var counter: UInt64 = 100
    }

    private let state = Mutex(State())

    func set(_ mode: Mode) {
        state.withLock { $0.mode = mode }
    }

    func send(_ change: RosterChange, _ id: MutationID) throws -> Version {
        try state.withLock { state in
            state.attempts.append(id)
            switch state.mode {
            case .away: throw TransportError()
            case .failing(let status): throw HTTPStatusError(status: status)
            case .losesAnswers:
                if state.applied[id] == nil {
                    state.counter += 1
                    state.applied[id] = state.counter
                    state.order.append(id)
                }
                throw TransportError()
            case .up:
                if let counter = state.applied[id] { return Version(counter: counter) }
                state.counter += 1
                state.applied[id] = state.counter
                state.order.append(id)
                return Version(counter: state.counter)
            }
        }
    }

    /// Every attempt, failed or not.
    var attempts: [MutationID] { state.withLock { $0.attempts } }
    /// The mutations applied, in the order they were, each once.
    var applied: [MutationID] { state.withLock { $0.order } }
}

/// A server that stays away, for seconds or for an hour: only the server's refusal removes a
/// mutation; everything else keeps it queued, shown, saved, and sends it once the server is
/// back, in order, once.
@Suite("optimistic mutations through outages")
struct MutationOutageTests {
    let clock: TestClock
    let server: OutageServer
    let statuses = AsyncStream.makeStream(of: ResourceStatus<[String]>.self)
    /// The wall clock of the machines and of the test's own dates: one, so that a loaded
    /// machine's real time between two readings cannot age a mutation.
    let now: @Sendable () -> Date

    init() {
        self.init(clock: TestClock(), server: OutageServer())
    }

    /// A fixture for a relaunch: the same server and clock, new resource statuses.
    init(clock: TestClock, server: OutageServer) {
        self.clock = clock
        self.server = server
        self.now = wallClock(following: clock, from: Date(timeIntervalSince1970: 1_800_000_000))
    }

    /// A machine on the fixture's clock and statuses; its sends go to `scripted` when given (each
    /// waits for the test's answer), else to the outage server.
    func makeStore(
        client: ClientID = ClientID(rawValue: "c1"),
        store: (any MutationStore<RosterChange>)? = nil,
        fixedNow: Date? = nil,
        scripted: FakeMutationServer? = nil,
        _ configure: (inout ResourcePolicy) -> Void = { _ in }
    ) async -> TestSystem<Roster, Roster.Event> {
        var policy = ResourcePolicy()
        policy.jitter = ResourcePolicy.noJitter
        configure(&policy)
        let stream = statuses.stream
        let server = server
        let now: @Sendable () -> Date
        if let fixedNow {
            now = { fixedNow }
        } else {
            now = self.now
        }
        let system = await TestSystem(
            initialState: Roster(client: client),
            reduce: Roster.reduce(policy: policy),
            feedbacks: Roster.feedbacks(
                send: { change, id in
                    if let scripted { return try await scripted.send(change, id) }
                    return try server.send(change, id)
                },
                store: store,
                policy: policy,
                clock: clock,
                now: now,
                statuses: { deliver in for await status in stream { await deliver(status) } }
            ),
            clock: clock
        )
        await system.setExhaustivity(.off)
        if store == nil { await system.send(.restored([], confirmed: nil)) }
        return system
    }

    func status(_ players: [String] = ["ann"], version: UInt64 = 1, lastMutationID: UInt64? = nil, offline: Bool = false, session: UInt64 = 0)
        -> ResourceStatus<[String]>
    {
        var status = ResourceStatus(value: Versioned(players, version: Version(counter: version), lastMutationID: lastMutationID), isOffline: offline)
        status.session = session
        return status
    }

    func publish(_ status: ResourceStatus<[String]>, to store: TestSystem<Roster, Roster.Event>) async {
        statuses.continuation.yield(status)
        await store.settle()
    }

    func mutation(_ name: String, _ sequence: UInt64, client: ClientID = ClientID(rawValue: "c1"), at date: Date? = nil) -> PendingMutation<
        RosterChange
    > {
        PendingMutation(.add(name), id: MutationID(client: client, sequence: sequence), queuedAt: date)
    }

    /// Advances the clock by `total` in steps, so that every backoff that comes due runs.
    func advance(by total: Duration, step: Duration = .seconds(5)) async {
        var left = total
        while left > .zero {
            let next = min(step, left)
            await clock.advance(by: next)
            left -= next
        }
    }

    @Test(
        "an hour with the server away: the mutation stays queued and shown, is retried at most every maxBackoff, and is applied once when the server is back"
    )
    func hourLongOutage() async {
        let store = await makeStore()
        await publish(status(), to: store)
        await store.send(.mutate(mutation("bob", 1)))
        await store.send(.mutate(mutation("cid", 2)))
        await advance(by: .seconds(3_600))
        let waiting = await store.state
        #expect(waiting.visible == ["ann", "bob", "cid"], "still shown after an hour")
        #expect(waiting.queue.map(\.id.rawValue) == ["c1:1", "c1:2"])
        #expect(waiting.refusals.isEmpty, "nothing was refused: the server never answered")
        if case .waiting(count: 2, let failure) = waiting.delivery {
            #expect(failure?.underlying is TransportError)
        } else {
            Issue.record("delivery: \(waiting.delivery)")
        }
        // 1 + 2 + 4 + 8 + 16 s, then every 30 s: about 120 attempts in an hour, not thousands.
        #expect((100...130).contains(server.attempts.count), "\(server.attempts.count) attempts")
        #expect(Set(server.attempts) == [MutationID(rawValue: "c1:1")], "the second waits behind the first")

        server.set(.up)
        await advance(by: .seconds(30))
        #expect(server.applied.map(\.rawValue) == ["c1:1", "c1:2"], "in order, once each")
        #expect(await store.state.delivery == .idle)
        await publish(status(["ann", "bob", "cid"], version: 3, lastMutationID: 2), to: store)
        #expect(await store.state.queue.isEmpty)
        #expect(await store.state.visible == ["ann", "bob", "cid"])
        await store.finish()
    }

    @Test("5xx and deadlines are waited out like an unreachable server; a 4xx refusal is the one outcome that removes a mutation")
    func onlyRefusalsRemove() async {
        let store = await makeStore { $0.requestTimeout = .seconds(10) }
        await publish(status(), to: store)
        server.set(.failing(503))
        await store.send(.mutate(mutation("bob", 1)))
        await advance(by: .seconds(600))
        server.set(.failing(500))
        await advance(by: .seconds(600))
        #expect(await store.state.queue.count == 1)
        #expect(await store.state.refusals.isEmpty)
        server.set(.failing(409))
        await advance(by: .seconds(31))
        let refused = await store.state
        #expect(refused.queue.isEmpty)
        #expect(refused.refusals.map(\.id.rawValue) == ["c1:1"])
        #expect(refused.refusals.first?.error.kind == .unrecoverable)
        #expect(refused.visible == ["ann"])
        await store.finish()
    }

    @Test("offline, nothing is sent, whatever the backoffs; back online, the queue goes at once, in order")
    func offlinePausesThenSendsAtOnce() async {
        let store = await makeStore()
        await publish(status(), to: store)
        await store.send(.mutate(mutation("bob", 1)))  // fails: the server is away
        let attemptsBeforeOffline = server.attempts.count
        #expect(attemptsBeforeOffline == 1)
        await publish(status(offline: true), to: store)
        await store.send(.mutate(mutation("cid", 2)))
        await advance(by: .seconds(600))
        #expect(server.attempts.count == attemptsBeforeOffline, "nothing sent while offline")
        #expect(await store.state.delivery == .waiting(count: 2, failure: ResourceFailure(TransportError(), kind: .transient(retryAfter: nil))))
        server.set(.up)
        await publish(status(offline: false), to: store)
        // No clock advance: coming back online sends without waiting for a backoff.
        #expect(server.applied.map(\.rawValue) == ["c1:1", "c1:2"])
        await store.finish()
    }

    @Test("a backoff grown to its maximum is cut short when the resource reaches the server again")
    func backoffCutWhenServerBack() async {
        let store = await makeStore()
        await publish(status(), to: store)
        await store.send(.mutate(mutation("bob", 1)))
        await advance(by: .seconds(300))
        var failing = status()
        failing.isRetrying = true
        await publish(failing, to: store)
        let attempts = server.attempts.count
        server.set(.up)
        await publish(status(version: 2), to: store)
        #expect(server.attempts.count == attempts + 1, "sent as the resource recovered, not 30 s later")
        #expect(server.applied.map(\.rawValue) == ["c1:1"])
        await store.finish()
    }

    @Test("an attempt on its way when the network goes is not cancelled: its answer is taken, and it is not sent again")
    func inFlightSurvivesOffline() async {
        let slow = FakeMutationServer()
        let store = await makeStore(scripted: slow)
        await publish(status(), to: store)
        await store.send(.mutate(mutation("bob", 1)))
        #expect(slow.inFlight == [.add("bob")])
        await publish(status(offline: true), to: store)
        #expect(slow.inFlight == [.add("bob")], "still waiting for its answer")
        slow.acknowledge(version: 2)
        await store.settle()
        #expect(await store.state.queue.first?.status == .confirmed(Version(counter: 2)))
        await publish(status(offline: false), to: store)
        await clock.advance(by: .seconds(60))
        #expect(slow.sent.count == 1)
        await store.finish()
    }

    @Test("killed during an outage and relaunched under a new client id: the stored queue is shown, then sent once when the server is back")
    func relaunchDuringOutage() async {
        let saved = InMemoryMutationStore<RosterChange>()
        let first = await makeStore(store: saved)
        await publish(status(), to: first)
        await first.send(.mutate(mutation("bob", 1)))
        await first.send(.mutate(mutation("cid", 2)))
        await advance(by: .seconds(120))
        #expect(await saved.load().map(\.id.rawValue) == ["c1:1", "c1:2"], "saved before the app is killed")
        await first.finish()

        let relaunch = MutationOutageTests(clock: clock, server: server)
        let second = await relaunch.makeStore(client: ClientID(rawValue: "c2"), store: saved)
        await relaunch.publish(status(offline: true), to: second)
        #expect(await second.state.visible == ["ann", "bob", "cid"], "the user's actions are back before the server is")
        server.set(.up)
        await relaunch.publish(status(offline: false), to: second)
        #expect(server.applied.map(\.rawValue) == ["c1:1", "c1:2"])
        #expect(Set(server.attempts).count == 2)
        await second.send(.mutate(mutation("dan", 1, client: ClientID(rawValue: "c2"))))
        #expect(server.applied.map(\.rawValue) == ["c1:1", "c1:2", "c2:1"], "new mutations after the restored ones")
        await second.finish()
    }

    @Test("the session expires during the outage: the mutation waits for the new sign-in, then is sent once")
    func sessionExpiresDuringOutage() async {
        let store = await makeStore()
        await publish(status(), to: store)
        await store.send(.mutate(mutation("bob", 1)))
        await advance(by: .seconds(900))
        server.set(.failing(401))
        await advance(by: .seconds(31))
        #expect(await store.state.blockedSession == 0)
        let attemptsWhileSignedOut = server.attempts.count
        await advance(by: .seconds(600))
        #expect(server.attempts.count == attemptsWhileSignedOut, "no attempt until a new sign-in")
        #expect(await store.state.queue.count == 1)
        server.set(.up)
        await publish(status(session: 1), to: store)
        #expect(server.applied.map(\.rawValue) == ["c1:1"])
        #expect(await store.state.refusals.isEmpty)
        await store.finish()
    }

    @Test("past the app's maximum age a mutation is held as could not send, shown and stored, until discarded; what follows it then goes")
    func maximumAgeThenDiscard() async {
        let saved = InMemoryMutationStore<RosterChange>()
        let store = await makeStore(store: saved) { $0.maximumMutationAge = .seconds(600) }
        await publish(status(), to: store)
        await store.send(.mutate(mutation("bob", 1, at: now())))
        await advance(by: .seconds(300))
        await store.send(.mutate(mutation("cid", 2, at: now())))
        await advance(by: .seconds(299))
        #expect(await store.state.delivery == .waiting(count: 2, failure: ResourceFailure(TransportError(), kind: .transient(retryAfter: nil))))
        await advance(by: .seconds(2))
        let held = await store.state
        #expect(held.delivery == .couldNotSend(count: 2))
        #expect(held.queue.map(\.status) == [.expired, .pending], "the second waits behind the first, in order")
        #expect(held.visible == ["ann", "bob", "cid"], "held, never dropped")
        #expect(held.refusals.isEmpty)
        let attempts = server.attempts.count
        server.set(.up)
        await publish(status(version: 2), to: store)
        await advance(by: .seconds(120))
        #expect(server.attempts.count == attempts, "a held mutation goes only when the app says so")
        #expect(await saved.load().map(\.status) == [.expired, .pending], "held across a relaunch too")

        await store.send(.discard(MutationID(rawValue: "c1:1")))
        #expect(await store.state.discarded.map(\.rawValue) == ["c1:1"], "reported to watchers")
        #expect(server.applied.map(\.rawValue) == ["c1:2"], "the discarded one never reached the server; the next went at once")
        let after = await store.state
        #expect(after.visible == ["ann", "cid"], "\(after.queue) \(String(describing: after.confirmed))")
        await store.finish()
    }

    @Test("a held mutation retried goes at once, its age counted again from the retry")
    func maximumAgeThenRetry() async {
        let store = await makeStore { $0.maximumMutationAge = .seconds(600) }
        await publish(status(), to: store)
        await store.send(.mutate(mutation("bob", 1, at: now())))
        await advance(by: .seconds(601))
        #expect(await store.state.delivery == .couldNotSend(count: 1))
        await store.send(.retry(MutationID(rawValue: "c1:1"), at: now()))
        #expect(await store.state.queue.map(\.status) == [.pending])
        await advance(by: .seconds(300))
        #expect(await store.state.queue.map(\.status) == [.pending], "a new age from the retry")
        server.set(.up)
        await advance(by: .seconds(30))
        #expect(server.applied.map(\.rawValue) == ["c1:1"])
        await store.finish()
    }

    @Test("a mutation's age counts across a relaunch, from when it was queued")
    func ageSurvivesRelaunch() async {
        let saved = InMemoryMutationStore<RosterChange>()
        let queued = Date(timeIntervalSince1970: 1_000_000)
        await saved.save([mutation("bob", 1, at: queued)])
        // Relaunched 15 minutes later with a 10-minute maximum: held at once, not sent.
        let store = await makeStore(store: saved, fixedNow: queued.addingTimeInterval(900)) { $0.maximumMutationAge = .seconds(600) }
        server.set(.up)
        await publish(status(), to: store)
        #expect(await store.state.delivery == .couldNotSend(count: 1))
        #expect(server.attempts.isEmpty)
        await store.finish()
    }

    @Test("an in-memory store keeps the confirmed value it is given (the protocol's default keeps none)")
    func inMemoryStoreKeepsConfirmed() async {
        let saved = InMemoryMutationStore<RosterChange>()
        await saved.saveConfirmed(Versioned(["ann"], version: Version(counter: 3)))
        #expect(await saved.loadConfirmed() == Versioned(["ann"], version: Version(counter: 3)))
    }

    @Test("retry and discard do nothing to a mutation that is not held")
    func retryAndDiscardOnlyHeld() async {
        let store = await makeStore()
        await publish(status(), to: store)
        await store.send(.mutate(mutation("bob", 1)))
        await store.send(.discard(MutationID(rawValue: "c1:1")))
        await store.send(.retry(MutationID(rawValue: "c1:1"), at: Date()))
        #expect(await store.state.queue.map(\.status) == [.pending])
        #expect(await store.state.visible == ["ann", "bob"])
        await store.finish()
    }

    /// A first launch (client c1) whose mutation "bob" the server applied with the answer lost:
    /// it stays queued in the returned store when the launch ends.
    private func bobAppliedWithItsAnswerLost() async -> InMemoryMutationStore<RosterChange> {
        let saved = InMemoryMutationStore<RosterChange>()
        let first = await makeStore(store: saved)
        await publish(status(), to: first)
        server.set(.losesAnswers)
        await first.send(.mutate(mutation("bob", 1)))
        #expect(server.applied.map(\.rawValue) == ["c1:1"])
        server.set(.away)
        await advance(by: .seconds(10))
        await first.finish()
        return saved
    }

    @Test(
        "relaunched under a new client id, a restored mutation the server had applied (its answer lost) shows once: values wait for its resend's answer"
    )
    func restoredMutationShowsOnce() async {
        let saved = await bobAppliedWithItsAnswerLost()
        #expect(await saved.load().map(\.id.rawValue) == ["c1:1"])

        // The second launch's sends wait for the test's answer, so that its first value (the
        // server's list, which holds bob) arrives before the resend is answered.
        let scripted = FakeMutationServer()
        let relaunch = MutationOutageTests(clock: clock, server: server)
        let second = await relaunch.makeStore(client: ClientID(rawValue: "c2"), store: saved, scripted: scripted)
        #expect(await second.state.visible == ["ann", "bob"], "the stored screen")
        // The server's list holds bob; its lastMutationID counts c2's mutations: none.
        await relaunch.publish(status(["ann", "bob"], version: 101), to: second)
        #expect(await second.state.visible == ["ann", "bob"], "bob once, not twice, before the resend is answered")
        #expect(scripted.inFlight == [.add("bob")], "sent again with its id")
        scripted.acknowledge(version: 101)  // the server's remembered answer
        await second.settle()
        let settled = await second.state
        #expect(settled.visible == ["ann", "bob"])
        #expect(settled.queue.isEmpty)
        #expect(settled.confirmed?.version == Version(counter: 101))
        await second.finish()
    }

    @Test(
        "relaunched with no value kept (the store saves the queue alone), a restored mutation the server had applied shows once: left out of the server's first value until its resend is answered"
    )
    func restoredMutationShowsOnceWithoutStoredValue() async {
        let saved = await bobAppliedWithItsAnswerLost()

        // The queue alone: killed before its first value was saved, or a store that keeps none.
        let queueOnly = InMemoryMutationStore<RosterChange>(await saved.load())
        let scripted = FakeMutationServer()
        let relaunch = MutationOutageTests(clock: clock, server: server)
        let second = await relaunch.makeStore(client: ClientID(rawValue: "c2"), store: queueOnly, scripted: scripted)
        #expect(await second.state.visible == nil, "nothing to show before the server answers")
        await relaunch.publish(status(["ann", "bob"], version: 101), to: second)
        #expect(await second.state.visible == ["ann", "bob"], "bob once, not twice, before the resend is answered")
        #expect(scripted.inFlight == [.add("bob")], "sent again with its id")
        scripted.acknowledge(version: 101)  // the server's remembered answer
        await second.settle()
        let settled = await second.state
        #expect(settled.visible == ["ann", "bob"])
        #expect(settled.queue.isEmpty)
        await second.finish()
    }

    @Test("a restored mutation the server never received shows on top of the held value, then of the server's, once")
    func restoredMutationNeverReceived() async {
        let saved = InMemoryMutationStore<RosterChange>()
        await saved.save([mutation("bob", 1)])
        await saved.saveConfirmed(Versioned(["ann"], version: Version(counter: 1)))
        let store = await makeStore(client: ClientID(rawValue: "c2"), store: saved)
        await publish(status(["ann", "cid"], version: 2, offline: true), to: store)
        let waiting = await store.state
        #expect(
            waiting.visible == ["ann", "bob"],
            "the last launch's screen while bob waits: \(waiting.queue) \(String(describing: waiting.confirmed)) \(String(describing: waiting.held)) \(waiting.earlierLaunch)"
        )
        server.set(.up)
        await publish(status(["ann", "cid"], version: 2), to: store)
        #expect(server.applied.map(\.rawValue) == ["c1:1"])
        #expect(await store.state.visible == ["ann", "cid", "bob"], "the server's newer value, bob on top until confirmed")
        await publish(status(["ann", "cid", "bob"], version: 101), to: store)
        #expect(await store.state.visible == ["ann", "cid", "bob"])
        #expect(await store.state.queue.isEmpty)
        await store.finish()
    }

    @Test("the stored value's lastMutationID counted the earlier launch's client: it never drops this launch's mutations unsent")
    func storedLastMutationIDIsNotThisLaunchs() async {
        let saved = InMemoryMutationStore<RosterChange>()
        await saved.saveConfirmed(Versioned(["ann"], version: Version(counter: 1), lastMutationID: 5))
        let c2 = ClientID(rawValue: "c2")
        let store = await makeStore(client: c2, store: saved)
        await publish(status(["ann"], version: 1, offline: true), to: store)
        await store.send(.mutate(mutation("bob", 1, client: c2)))
        await store.send(.mutate(mutation("cid", 2, client: c2)))
        server.set(.up)
        await publish(status(["ann"], version: 1), to: store)
        #expect(server.applied.map(\.rawValue) == ["c2:1", "c2:2"], "both sent: neither taken for processed")
        #expect(await store.state.visible == ["ann", "bob", "cid"])
        await store.finish()
    }
}
