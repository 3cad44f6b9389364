import Foundation
import StateLoop
import StateLoopWire
import Synchronization

/// A remote resource the app changes optimistically: each mutation shows at once, is sent to
/// the server in order with its client mutation id, and stays on top of the server's value
/// until that value contains it.
///
/// ```swift
/// let roster = OptimisticResource(resource: players, store: journalStore) { change, id in
///     try await api.apply(change, mutationID: id)   // returns the version the server reached
/// }
/// roster.mutate(AddPlayer(player: bob))             // visible at once
/// for await failure in roster.refusals() { show("Could not add \(failure.mutation)") }
/// ```
///
/// The visible value is the newest confirmed value with every pending mutation replayed on top,
/// so a push from another client rebases the pending mutations, and a refused mutation is
/// removed alone: newer server data and the other pending mutations stay.
public final class OptimisticResource<M: Mutation>: Sendable {
    /// The client under which this resource numbers and sends its mutations; give it to the
    /// transports (`Client-ID`) so that values say which of them they contain.
    public let clientID: ClientID
    /// The resource the confirmed value comes from: refresh it, or read its request count,
    /// through here.
    public let resource: RemoteResource<M.Value>
    /// Whether ``stop()`` stops ``resource`` too (it was made for this resource alone).
    private let stopsResource: Bool
    private let commands: AsyncStream<OptimisticMachine<M>.Event>.Continuation
    /// The wall clock that dates each mutation (its age survives a relaunch).
    private let now: @Sendable () -> Date
    /// The numbering of new mutations, and what the caller sees before the machine has
    /// published them (see ``value``).
    private let local = LocalViewBox<M>()
    /// This instance's id in its statuses' positions.
    private let publisher = UUID()
    private let statuses = Subscribers<OptimisticStatus<M>>(replaysLatest: true, bufferingPolicy: .bufferingNewest(1))
    /// Watchers that take nothing from the app's subscribers (``observe()``).
    private let observers = Subscribers<OptimisticObservation<M>>(replaysLatest: true, bufferingPolicy: .bufferingNewest(256))
    private let refusalSubscribers = Subscribers<RefusedMutation<M>>(
        replaysLatest: false, holdsUndelivered: true, bufferingPolicy: .unbounded
    )

    /// - Parameters:
    ///   - resource: Where the confirmed value comes from.
    ///   - store: Where the queue is kept across launches; it is loaded first, and nothing is
    ///     sent before it is.
    ///   - clientID: The client this resource's new mutations are numbered under. Each instance
    ///     needs its own (the default is a new one); pass one only to share it with transports
    ///     built before the resource, never one an earlier launch used.
    ///   - policy: The backoff between attempts after a transient failure (same mutation id each
    ///     time, for as long as it takes), the deadline of each attempt, and the maximum age of
    ///     an unsent mutation.
    ///   - clock: The clock of every timer (backoffs, deadlines, maximum ages).
    ///   - send: Sends one mutation with its id; returns the version at which the server applied
    ///     it, or throws. Throw ``HTTPStatusError`` for the server's answers: only a refusal
    ///     (a 4xx other than 401, 403, 408 and 429, as the policy classifies it) removes the
    ///     mutation; any other failure keeps it queued and retried.
    public convenience init(
        resource: RemoteResource<M.Value>,
        store: (any MutationStore<M>)? = nil,
        clientID: ClientID = ClientID(),
        policy: ResourcePolicy = ResourcePolicy(),
        clock: any Clock<Duration> = ContinuousClock(),
        send: @escaping @Sendable (M, MutationID) async throws -> Version
    ) {
        self.init(
            resource: resource, store: store, clientID: clientID, policy: policy, clock: clock,
            now: wallClock(following: clock), send: send
        )
    }

    /// A resource that owns `resource`: ``stop()`` stops both (what StateLoopSyncTransports' `SyncEndpoint` makes).
    package convenience init(
        resource: RemoteResource<M.Value>,
        store: (any MutationStore<M>)?,
        clientID: ClientID,
        policy: ResourcePolicy,
        clock: any Clock<Duration>,
        stopsResource: Bool,
        send: @escaping @Sendable (M, MutationID) async throws -> Version
    ) {
        self.init(
            resource: resource, store: store, clientID: clientID, policy: policy, clock: clock,
            now: wallClock(following: clock), stopsResource: stopsResource, send: send
        )
    }

    /// The designated initializer, with the wall clock that dates mutations (tests give one that
    /// follows their clock across a relaunch).
    init(
        resource: RemoteResource<M.Value>,
        store: (any MutationStore<M>)?,
        clientID: ClientID,
        policy: ResourcePolicy,
        clock: any Clock<Duration>,
        now: @escaping @Sendable () -> Date,
        stopsResource: Bool = false,
        send: @escaping @Sendable (M, MutationID) async throws -> Version
    ) {
        self.clientID = clientID
        self.now = now
        self.resource = resource
        self.stopsResource = stopsResource
        let (commandStream, commands) = AsyncStream.makeStream(of: OptimisticMachine<M>.Event.self)
        self.commands = commands
        let statuses = statuses
        let publisher = publisher
        let refusalSubscribers = refusalSubscribers
        let observers = observers
        let feedbacks = OptimisticMachine<M>.feedbacks(
            send: send,
            store: store,
            policy: policy,
            clock: clock,
            now: now,
            statuses: { deliver in
                for await status in resource.updates() { await deliver(status) }
            },
            reportUnauthorized: { resource.reportUnauthorized($0) }
        )
        Task {
            await SystemHost().run(
                initialState: OptimisticMachine<M>(client: clientID),
                reduce: OptimisticMachine<M>.reduce(policy: policy),
                feedbacks: feedbacks,
                commands: commandStream
            ) { [local] machine in
                // Before the stored queue is loaded, the queue shown would be empty and the
                // value unknown: a relaunched screen would briefly claim nothing is pending.
                guard machine.isRestored else { return nil }
                let status = local.state.withLock { local in
                    var status = OptimisticStatus(machine)
                    local.revision += 1
                    status.position = StatusPosition(publisher: publisher, lastQueued: machine.lastQueued, revision: local.revision)
                    local.published(status, through: machine.lastQueued)
                    return status
                }
                if !machine.refusals.isEmpty { observers.publish(.refused(machine.refusals)) }
                if !machine.discarded.isEmpty { observers.publish(.discarded(machine.discarded)) }
                statuses.publish(status)
                observers.publish(.status(status))
                for failure in machine.refusals { refusalSubscribers.publish(failure) }
                // Reported once: published above, then cleared.
                guard !machine.refusals.isEmpty || !machine.discarded.isEmpty else { return nil }
                return .reported(refusals: machine.refusals.count, discards: machine.discarded.count)
            }
            statuses.finishAll()
            refusalSubscribers.finishAll()
            observers.finishAll()
        }
    }

    deinit {
        commands.finish()
    }

    /// Stops the resource for good: nothing more is sent, the queue stays in its store for the
    /// next launch, and every subscriber's sequence finishes. The ``RemoteResource`` under it
    /// goes on (others may share it): stop it too when it is this resource's alone. One that a
    /// `SyncEndpoint` made is: it is stopped here.
    public func stop() {
        commands.finish()
        if stopsResource { resource.stop() }
    }

    /// Applies `mutation` to the visible value now and queues it for the server, numbered after
    /// every mutation made before it.
    @discardableResult
    public func mutate(_ mutation: M) -> MutationID {
        // Numbered and queued under one lock, so the queue's order is the numbers' order.
        local.state.withLock { local in
            local.lastSequence += 1
            let pending = PendingMutation(mutation, id: MutationID(client: clientID, sequence: local.lastSequence), queuedAt: now())
            local.unpublished.append(pending)
            commands.yield(.mutate(pending))
            return pending.id
        }
    }

    /// Sends an ``MutationStatus/expired`` mutation again (and the ones queued after it), its
    /// age counted from now. Does nothing for a mutation in any other state.
    public func retry(_ id: MutationID) {
        commands.yield(.retry(id, at: now()))
    }

    /// Gives up an ``MutationStatus/expired`` mutation: it leaves the queue and the visible
    /// value, and the ones queued after it are sent. Does nothing for a mutation in any other
    /// state: one on its way, or accepted, may already be applied.
    public func discard(_ id: MutationID) {
        commands.yield(.discard(id))
    }

    /// The value as the user sees it right now, synchronously: ``status``'s value, the last
    /// published one with every mutation made since replayed on top, even those the resource's
    /// actor has not handled yet. `nil` until a value is known. A system takes the whole status
    /// in the same step as the mutation with ``StateLoop/System/mutate(_:_:event:fileID:line:)``.
    public var value: M.Value? {
        status?.value
    }

    /// What a screen should show now: the status the resource published last, with every
    /// mutation queued since on top (shown as pending), like ``value``; `nil` until the first
    /// status (the stored queue loaded). Right after ``mutate(_:)`` it holds the mutation, so a
    /// system can take it in the same step (``StateLoop/System/mutate(_:_:event:fileID:line:)``) rather
    /// than a hop later.
    public var status: OptimisticStatus<M>? {
        local.state.withLock { local in
            guard var status = local.latest else { return nil }
            guard !local.unpublished.isEmpty else { return status }
            status.value = status.value.map { local.unpublished.replayed(on: $0) }
            status.mutations += local.unpublished
            status.delivery = status.delivery.adding(local.unpublished.count)
            status.position = StatusPosition(publisher: publisher, lastQueued: local.lastSequence, revision: local.revision)
            return status
        }
    }

    /// The visible value, the queue and the resource's health: now, then after every change,
    /// from the moment the stored queue is loaded.
    public func updates() -> AsyncStream<OptimisticStatus<M>> {
        statuses.subscribe()
    }

    /// Watches the resource for an inspector: its current status, then each status it publishes,
    /// each preceded by the mutations that step refused. Takes nothing from ``refusals()``'s
    /// subscribers (a failure still waits for the app's), and a slow watcher loses the oldest.
    package func observe() -> AsyncStream<OptimisticObservation<M>> {
        observers.subscribe { [statuses] _ in statuses.latest.map { .status($0) } }
    }

    /// Each mutation the server refuses, or that its store dropped (see ``DroppedMutation``),
    /// once. A failure that comes while nobody subscribes (at launch, before the screen does)
    /// waits for the next subscriber.
    public func refusals() -> AsyncStream<RefusedMutation<M>> {
        refusalSubscribers.subscribe()
    }
}

/// What a screen shows of an optimistic resource.
public struct OptimisticStatus<M: Mutation>: Sendable {
    /// The confirmed value with every pending mutation on top.
    public var value: M.Value?
    /// The server's newest confirmed value.
    public var confirmed: Versioned<M.Value>?
    /// The mutations not yet contained in `confirmed`, with their status, so a screen can mark
    /// unconfirmed items.
    public var mutations: [PendingMutation<M>]
    /// The underlying remote resource's status (loading, slow, offline, unauthorized, failed),
    /// so that a screen gets value and health in one update.
    public var resource: ResourceStatus<M.Value>
    /// Whether the mutations the server has not accepted are on their way, waiting, or held.
    public var delivery: MutationDelivery
    /// Where the status stands among its resource's statuses; `nil` for one built from parts.
    /// A status delivered late (one ``OptimisticResource/updates()`` had taken before a newer
    /// one reached the screen another way) ``StatusPosition/precedes(_:)`` it: a screen that
    /// already shows the newer one keeps it, as ``ResourceSnapshot/update(to:)`` does.
    public var position: StatusPosition?

    /// A status from its parts (tests build them).
    init(
        value: M.Value?, confirmed: Versioned<M.Value>?, mutations: [PendingMutation<M>], resource: ResourceStatus<M.Value>,
        delivery: MutationDelivery = .idle
    ) {
        self.value = value
        self.confirmed = confirmed
        self.mutations = mutations
        self.resource = resource
        self.delivery = delivery
    }

    init(_ machine: OptimisticMachine<M>) {
        value = machine.visible
        confirmed = machine.confirmed
        mutations = machine.queue
        resource = machine.resource
        delivery = machine.delivery
    }
}

/// Where the mutations the server has not accepted yet stand, for a status line. Every one of
/// them is still shown and still queued, whatever the case: only the server's refusal removes
/// a mutation (reported through ``OptimisticResource/refusals()``).
public enum MutationDelivery: Sendable, Equatable {
    /// Nothing waits for the server.
    case idle
    /// The oldest of `count` unaccepted mutations is on its way; the others follow it in order.
    case sending(count: Int)
    /// `count` mutations wait to be sent: the network is away, the server did not answer or
    /// answered with a transient error (`failure` says so; the next attempt comes after a
    /// backoff, or as soon as the server can be reached again), or it wants a new sign-in.
    /// Nothing is lost: they are kept, across relaunches too, and sent in order, once each.
    case waiting(count: Int, failure: ResourceFailure?)
    /// The oldest of `count` unaccepted mutations passed the policy's
    /// ``ResourcePolicy/maximumMutationAge`` unsent: nothing is sent until the app calls
    /// ``OptimisticResource/retry(_:)`` or ``OptimisticResource/discard(_:)`` for it.
    case couldNotSend(count: Int)

    /// The number of mutations the server has not accepted yet.
    public var count: Int {
        switch self {
        case .idle: 0
        case .sending(let count), .waiting(let count, _), .couldNotSend(let count): count
        }
    }

    /// The same with `queued` more mutations behind the others: nothing waiting means they are
    /// about to be sent.
    func adding(_ queued: Int) -> MutationDelivery {
        switch self {
        case .idle: .sending(count: queued)
        case .sending(let count): .sending(count: count + queued)
        case .waiting(let count, let failure): .waiting(count: count + queued, failure: failure)
        case .couldNotSend(let count): .couldNotSend(count: count + queued)
        }
    }
}

/// Where a status stands among the statuses of one ``OptimisticResource``: which resource
/// published it, how far into its queue (the sequence number of the newest mutation it holds),
/// and its place among the statuses the resource published. A later status of the same resource
/// never precedes an earlier one.
///
/// Codable, so that a journal or a recorded session keeps it with the snapshot it orders: the
/// reducer decides the same way when the events are replayed.
public struct StatusPosition: Sendable, Hashable, Codable {
    /// The resource that published the status: one id per instance, so that the statuses of
    /// another launch (or another resource) are never ordered against this one's.
    public var publisher: UUID
    /// The sequence number of the newest mutation the status holds (0 for none yet).
    public var lastQueued: UInt64
    /// How many statuses the resource had published when this one was made.
    public var revision: UInt64

    /// A position from its parts.
    public init(publisher: UUID, lastQueued: UInt64, revision: UInt64) {
        self.publisher = publisher
        self.lastQueued = lastQueued
        self.revision = revision
    }

    /// Whether this status is older than `other`, a status of the same resource: it holds fewer
    /// of the queue's mutations, or as many and was published before. Statuses of different
    /// publishers are never ordered.
    public func precedes(_ other: StatusPosition) -> Bool {
        publisher == other.publisher && (lastQueued, revision) < (other.lastQueued, other.revision)
    }
}

/// A wall clock that moves with `clock` from now on, starting at `date`: the real date under a
/// real clock, a date that a test's clock moves under a test clock.
func wallClock(following clock: any Clock<Duration>, from date: Date = Date()) -> @Sendable () -> Date {
    func following<C: Clock<Duration>>(_ clock: C) -> @Sendable () -> Date {
        let start = clock.now
        return {
            let elapsed = start.duration(to: clock.now).components
            return date.addingTimeInterval(Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18)
        }
    }
    return following(clock)
}

/// The lock around a `LocalView`, shared with the resource's actor.
final class LocalViewBox<M: Mutation>: Sendable {
    let state = Mutex(LocalView<M>())
}

/// What `OptimisticResource.value` is computed from: the last published status and the
/// mutations made after the one it had seen last.
struct LocalView<M: Mutation>: Sendable {
    var lastSequence: UInt64 = 0
    /// How many statuses were published.
    var revision: UInt64 = 0
    var latest: OptimisticStatus<M>?
    var unpublished: [PendingMutation<M>] = []

    /// A status that includes every mutation up to sequence `through` (shown or already gone).
    mutating func published(_ status: OptimisticStatus<M>, through sequence: UInt64) {
        latest = status
        unpublished.removeAll { ($0.id.parts?.sequence ?? 0) <= sequence }
    }
}

/// What a watcher of an optimistic resource sees (``OptimisticResource/observe()``).
package enum OptimisticObservation<M: Mutation>: Sendable {
    /// The status the resource published.
    case status(OptimisticStatus<M>)
    /// Mutations that left the queue refused (by the server, or dropped by the store), before
    /// the status that no longer holds them.
    case refused([RefusedMutation<M>])
    /// Expired mutations the app discarded, before the status that no longer holds them.
    case discarded([MutationID])
}
