import StateLoopWire
import StateLoop
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
/// for await failure in roster.failures() { show("Could not add \(failure.mutation)") }
/// ```
///
/// The visible value is the newest confirmed value with every pending mutation replayed on top,
/// so a push from another client rebases the pending mutations, and a rejected mutation is
/// removed alone: newer server data and the other pending mutations stay.
public final class OptimisticResource<M: Mutation>: Sendable {
    /// The client under which this resource numbers and sends its mutations; give it to the
    /// transports (`Client-ID`) so that values say which of them they contain.
    public let clientID: ClientID
    /// The resource the confirmed value comes from (for an inspector's watch of its drops).
    package let remote: RemoteResource<M.Value>
    private let commands: AsyncStream<OptimisticMachine<M>.Event>.Continuation
    /// The numbering of new mutations, and what the caller sees before the machine has
    /// published them (see ``value``).
    private let local = LocalViewBox<M>()
    private let statuses = Subscribers<OptimisticStatus<M>>(replaysLatest: true, bufferingPolicy: .bufferingNewest(1))
    /// Watchers that take nothing from the app's subscribers (``observe()``).
    private let observers = Subscribers<OptimisticObservation<M>>(replaysLatest: true, bufferingPolicy: .bufferingNewest(256))
    private let failureSubscribers = Subscribers<MutationFailure<M>>(
        replaysLatest: false, holdsUndelivered: true, bufferingPolicy: .unbounded
    )

    /// - Parameters:
    ///   - resource: Where the confirmed value comes from.
    ///   - store: Where the queue is kept across launches; it is loaded first, and nothing is
    ///     sent before it is.
    ///   - clientID: The client this resource's new mutations are numbered under. Each instance
    ///     needs its own (the default is a new one); pass one only to share it with transports
    ///     built before the resource, never one an earlier launch used.
    ///   - policy: Retries of transient failures (same mutation id each time) and the deadline
    ///     of each attempt.
    ///   - send: Sends one mutation with its id; returns the version at which the server applied
    ///     it, or throws.
    public init(
        resource: RemoteResource<M.Value>,
        store: (any MutationStore<M>)? = nil,
        clientID: ClientID = ClientID(),
        policy: ResourcePolicy = ResourcePolicy(),
        clock: any Clock<Duration> = ContinuousClock(),
        send: @escaping @Sendable (M, MutationID) async throws -> Version
    ) {
        self.clientID = clientID
        self.remote = resource
        let (commandStream, commands) = AsyncStream.makeStream(of: OptimisticMachine<M>.Event.self)
        self.commands = commands
        let statuses = statuses
        let failureSubscribers = failureSubscribers
        let observers = observers
        let feedbacks = OptimisticMachine<M>.feedbacks(
            send: send,
            store: store,
            policy: policy,
            clock: clock,
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
                let status = OptimisticStatus(machine)
                local.state.withLock { $0.published(status, through: machine.lastQueued) }
                if !machine.failures.isEmpty { observers.publish(.rejected(machine.failures)) }
                statuses.publish(status)
                observers.publish(.status(status))
                for failure in machine.failures { failureSubscribers.publish(failure) }
                // Reported once: published above, then cleared.
                return machine.failures.isEmpty ? nil : .failuresReported(machine.failures.count)
            }
            statuses.finishAll()
            failureSubscribers.finishAll()
            observers.finishAll()
        }
    }

    deinit {
        commands.finish()
    }

    /// Stops the resource for good: nothing more is sent, the queue stays in its store for the
    /// next launch, and every subscriber's sequence finishes. The ``RemoteResource`` under it
    /// goes on (others may share it): stop it too when it is this resource's alone.
    public func stop() {
        commands.finish()
    }

    /// Applies `mutation` to the visible value now and queues it for the server, numbered after
    /// every mutation made before it.
    @discardableResult
    public func mutate(_ mutation: M) -> MutationID {
        // Numbered and queued under one lock, so the queue's order is the numbers' order.
        local.state.withLock { local in
            local.lastSequence += 1
            let pending = PendingMutation(mutation, id: MutationID(client: clientID, sequence: local.lastSequence))
            local.unpublished.append(pending)
            commands.yield(.mutate(pending))
            return pending.id
        }
    }

    /// The value as the user sees it right now, synchronously: the last published value with
    /// every mutation made since replayed on top, even those the resource's actor has not
    /// handled yet. Read it where the user acts: two taps of a toggle in a row must flip it
    /// twice, not both compute from the value one hop behind. `nil` until a value is known.
    public var value: M.Value? {
        local.state.withLock { local in
            local.latest?.value.map { local.unpublished.replayed(on: $0) }
        }
    }

    /// The latest status, as ``updates()`` last delivered it; `nil` until the stored queue is
    /// loaded.
    public var status: OptimisticStatus<M>? {
        statuses.latest
    }

    /// The visible value, the queue and the resource's health: now, then after every change,
    /// from the moment the stored queue is loaded.
    public func updates() -> AsyncStream<OptimisticStatus<M>> {
        statuses.subscribe()
    }

    /// Watches the resource for an inspector: its current status, then each status it publishes,
    /// each preceded by the mutations that step rejected. Takes nothing from ``failures()``'s
    /// subscribers (a failure still waits for the app's), and a slow watcher loses the oldest.
    package func observe() -> AsyncStream<OptimisticObservation<M>> {
        observers.subscribe { [statuses] _ in statuses.latest.map { .status($0) } }
    }

    /// Each mutation the server rejects, or that its store dropped (see ``DroppedMutation``),
    /// once. A failure that comes while nobody subscribes (at launch, before the screen does)
    /// waits for the next subscriber.
    public func failures() -> AsyncStream<MutationFailure<M>> {
        failureSubscribers.subscribe()
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

    /// A status from its parts (tests build them).
    init(value: M.Value?, confirmed: Versioned<M.Value>?, mutations: [PendingMutation<M>], resource: ResourceStatus<M.Value>) {
        self.value = value
        self.confirmed = confirmed
        self.mutations = mutations
        self.resource = resource
    }

    init(_ machine: OptimisticMachine<M>) {
        value = machine.visible
        confirmed = machine.confirmed
        mutations = machine.queue
        resource = machine.resource
    }
}

/// The lock around a `LocalView`, shared with the resource's actor.
final class LocalViewBox<M: Mutation>: Sendable {
    let state = Mutex(LocalView<M>())
}

/// What `OptimisticResource.value` is computed from: the last published status and the
/// mutations made after the one it had seen last.
struct LocalView<M: Mutation>: Sendable {
    var lastSequence: UInt64 = 0
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
    case rejected([MutationFailure<M>])
}
