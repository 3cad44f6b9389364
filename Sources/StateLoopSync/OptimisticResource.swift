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
    private let commands: AsyncStream<OptimisticMachine<M>.Event>.Continuation
    private let sequence = Mutex<UInt64>(0)
    private let statuses = Subscribers<OptimisticStatus<M>>(replaysLatest: true, bufferingPolicy: .bufferingNewest(1))
    private let failureSubscribers = Subscribers<MutationFailure<M>>(replaysLatest: false, bufferingPolicy: .unbounded)

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
        let (commandStream, commands) = AsyncStream.makeStream(of: OptimisticMachine<M>.Event.self)
        self.commands = commands
        let statuses = statuses
        let failureSubscribers = failureSubscribers
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
            ) { machine in
                // Before the stored queue is loaded, the queue shown would be empty and the
                // value unknown: a relaunched screen would briefly claim nothing is pending.
                guard machine.isRestored else { return nil }
                statuses.publish(OptimisticStatus(machine))
                for failure in machine.failures { failureSubscribers.publish(failure) }
                // Reported once: published above, then cleared.
                return machine.failures.isEmpty ? nil : .failuresReported(machine.failures.count)
            }
            statuses.finishAll()
            failureSubscribers.finishAll()
        }
    }

    deinit {
        commands.finish()
    }

    /// Applies `mutation` to the visible value now and queues it for the server, numbered after
    /// every mutation made before it.
    @discardableResult
    public func mutate(_ mutation: M) -> MutationID {
        // Numbered and queued under one lock, so the queue's order is the numbers' order.
        sequence.withLock { last in
            last += 1
            let pending = PendingMutation(mutation, id: MutationID(client: clientID, sequence: last))
            commands.yield(.mutate(pending))
            return pending.id
        }
    }

    /// The visible value, the queue and the resource's health: now, then after every change,
    /// from the moment the stored queue is loaded.
    public func updates() -> AsyncStream<OptimisticStatus<M>> {
        statuses.subscribe()
    }

    /// Each mutation the server rejects, once.
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

    init(_ machine: OptimisticMachine<M>) {
        value = machine.visible
        confirmed = machine.confirmed
        mutations = machine.queue
        resource = machine.resource
    }
}
