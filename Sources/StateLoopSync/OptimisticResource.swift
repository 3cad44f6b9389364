import StateLoop

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
    private let commands: AsyncStream<OptimisticMachine<M>.Event>.Continuation
    private let statuses = Subscribers<OptimisticStatus<M>>(replaysLatest: true, bufferingPolicy: .bufferingNewest(1))
    private let failureSubscribers = Subscribers<MutationFailure<M>>(replaysLatest: false, bufferingPolicy: .unbounded)

    /// - Parameters:
    ///   - resource: Where the confirmed value comes from.
    ///   - store: Where the queue is kept across launches; it is loaded first, and nothing is
    ///     sent before it is.
    ///   - policy: Retries of transient failures (same mutation id each time).
    ///   - send: Sends one mutation with its id; returns the version at which the server applied
    ///     it, or throws.
    public init(
        resource: RemoteResource<M.Value>,
        store: (any MutationStore<M>)? = nil,
        policy: ResourcePolicy = ResourcePolicy(),
        clock: any Clock<Duration> = ContinuousClock(),
        send: @escaping @Sendable (M, MutationID) async throws -> Version
    ) {
        let (commandStream, commands) = AsyncStream.makeStream(of: OptimisticMachine<M>.Event.self)
        self.commands = commands
        let statuses = statuses
        let failureSubscribers = failureSubscribers
        let feedbacks = OptimisticMachine<M>.feedbacks(
            send: send,
            store: store,
            policy: policy,
            clock: clock,
            confirmedValues: { deliver in
                for await value in resource.values() { await deliver(value) }
            }
        )
        Task {
            await OptimisticHost<M>().run(commands: commandStream, feedbacks: feedbacks) { machine in
                statuses.publish(OptimisticStatus(machine))
                for failure in machine.failures { failureSubscribers.publish(failure) }
            }
            statuses.finishAll()
            failureSubscribers.finishAll()
        }
    }

    deinit {
        commands.finish()
    }

    /// Applies `mutation` to the visible value now and queues it for the server.
    @discardableResult
    public func mutate(_ mutation: M) -> MutationID {
        let pending = PendingMutation(mutation)
        commands.yield(.mutate(pending))
        return pending.id
    }

    /// The visible value and the queue: now, then after every change.
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

    init(_ machine: OptimisticMachine<M>) {
        value = machine.visible
        confirmed = machine.confirmed
        mutations = machine.queue
    }
}

/// The actor an optimistic resource's system lives on.
actor OptimisticHost<M: Mutation> {
    func run(
        commands: AsyncStream<OptimisticMachine<M>.Event>,
        feedbacks: [Feedback<OptimisticMachine<M>, OptimisticMachine<M>.Event>],
        publish: @escaping @Sendable (OptimisticMachine<M>) -> Void
    ) async {
        let system = System(initialState: OptimisticMachine<M>(), reduce: OptimisticMachine<M>.reduce, feedbacks: feedbacks)
        let subscription = system.observe { machine in
            publish(machine)
            if !machine.failures.isEmpty {
                // Reported once: published above, then cleared (queued behind this notification).
                system.send(.failuresReported(machine.failures.count))
            }
        }
        for await command in commands {
            system.send(command)
        }
        subscription.cancel()
        system.stop()
    }
}
