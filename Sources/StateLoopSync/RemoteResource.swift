import StateLoop
import StateLoopWire
import Synchronization

/// One piece of backend-owned state (a driver mode, a ride status), kept up to date from a
/// pull source and a push source, shared by every screen that needs it.
///
/// ```swift
/// let driverMode = RemoteResource(sources: ResourceSources(pull: api.driverMode, push: pushes.driverMode))
/// for await status in driverMode.updates() { render(status) }
/// ```
///
/// - Versioned: a received value replaces the held one only when its version is newer; older
///   answers (a slow HTTP response overtaken by a push) are dropped.
/// - Shared: however many subscribers, at most one request is in flight; a late subscriber gets
///   the last status at once, without a request. When the last subscriber leaves, a request in
///   flight survives for ``ResourcePolicy/gracePeriod``, so a screen that replaces another
///   joins it instead of starting over.
/// - Resilient: retries, polling, the slow signal, offline pauses and manual refresh follow the
///   ``ResourcePolicy``; ``ResourceStatus`` shows all of it.
///
/// Threading: the resource runs its logic on an actor of its own; its methods can be called
/// from anywhere.
public final class RemoteResource<Value: Sendable>: Sendable {
    private let subscribers: ResourceSubscribers<Value>
    private let commands: AsyncStream<ResourceMachine<Value>.Event>.Continuation

    /// Creates the resource. Nothing is fetched until the first subscriber arrives; pushes are
    /// received from the start.
    public init(
        sources: ResourceSources<Value>,
        policy: ResourcePolicy = ResourcePolicy(),
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        let (commandStream, commands) = AsyncStream.makeStream(of: ResourceMachine<Value>.Event.self)
        let subscribers = ResourceSubscribers<Value>(commands: commands)
        self.subscribers = subscribers
        self.commands = commands
        Task {
            await SystemHost().run(
                initialState: ResourceMachine<Value>(),
                reduce: ResourceMachine<Value>.reduce(policy: policy),
                feedbacks: ResourceMachine<Value>.feedbacks(sources: sources, policy: policy, clock: clock),
                commands: commandStream
            ) { machine in
                subscribers.publish(machine)
                return nil
            }
            subscribers.finishAll()
        }
    }

    deinit {
        commands.finish()
    }

    /// Stops the resource for good: its request, push channel, connectivity source and timers
    /// end, and every subscriber's sequence finishes. Releasing the resource does the same;
    /// call this where something else may still hold it (an optimistic resource built on it,
    /// a task that has not ended yet) and its sockets must close now.
    public func stop() {
        commands.finish()
    }

    /// The latest status.
    public var status: ResourceStatus<Value> {
        subscribers.status
    }

    /// How many requests the resource has started, for tests and the demo's verdict.
    public var requestsStarted: Int {
        subscribers.requestsStarted
    }

    /// Subscribes to the resource's status: the current status at once (loading when there is no
    /// value yet), then every change. A slow consumer skips to the latest status. Iterating keeps
    /// the resource active; the subscription ends when the consuming task is cancelled.
    public func updates() -> AsyncStream<ResourceStatus<Value>> {
        subscribers.subscribeToStatus()
    }

    /// Subscribes to the resource's values: the held value at once if there is one, then each
    /// newer version. Outdated versions are never emitted; a repeated version only when it
    /// brings a newer `Versioned.lastMutationID`.
    public func values() -> AsyncStream<Versioned<Value>> {
        subscribers.subscribeToValues()
    }

    /// Watches the resource without counting as a subscriber (nothing is fetched or pushed for
    /// it): its current status at once, then every status it publishes and every version it
    /// drops as outdated, for an inspector. A slow watcher loses the oldest observations.
    package func observe() -> AsyncStream<ResourceObservation<Value>> {
        subscribers.observe()
    }

    /// Fetches now: cancels any wait, clears a failure, joins a request already in flight.
    /// After an unauthorized failure (the app signed in again), it also restarts the push
    /// channel and lets optimistic resources on it send again.
    public func refresh() {
        commands.yield(.refresh)
    }

    /// An optimistic resource's mutation was refused for authorization: the resource stops
    /// and shows it too.
    func reportUnauthorized(_ failure: ResourceFailure) {
        commands.yield(.unauthorized(failure))
    }
}

/// The subscribers of a resource: to its status and to its values.
///
/// Arrivals and departures reach the resource's logic through `commands`, one ordered stream,
/// so a quick subscribe-then-leave is never seen in the wrong order.
final class ResourceSubscribers<Value: Sendable>: Sendable {
    private let statuses: Subscribers<ResourceStatus<Value>>
    private let values: Subscribers<Versioned<Value>>
    /// Watchers that are not subscribers (``RemoteResource/observe()``).
    private let observers = Subscribers<ResourceObservation<Value>>(replaysLatest: true, bufferingPolicy: .bufferingNewest(256))
    private let counters = Mutex((requests: 0, dropped: 0))

    init(commands: AsyncStream<ResourceMachine<Value>.Event>.Continuation) {
        let arrive: @Sendable () -> Void = { commands.yield(.subscribed) }
        let leave: @Sendable () -> Void = { commands.yield(.unsubscribed) }
        statuses = Subscribers(replaysLatest: true, bufferingPolicy: .bufferingNewest(1), onArrival: arrive, onDeparture: leave)
        values = Subscribers(replaysLatest: true, bufferingPolicy: .unbounded, onArrival: arrive, onDeparture: leave)
    }

    /// Before the machine's first status: nothing known, nothing running.
    private static var initialStatus: ResourceStatus<Value> {
        ResourceStatus(value: nil)
    }

    var status: ResourceStatus<Value> {
        statuses.latest ?? Self.initialStatus
    }

    var requestsStarted: Int {
        counters.withLock { $0.requests }
    }

    /// The current status first, then what ``publish(_:)`` observes.
    func observe() -> AsyncStream<ResourceObservation<Value>> {
        observers.subscribe { [statuses] _ in .status(statuses.latest ?? Self.initialStatus) }
    }

    /// Starts with the current status, loading when there is no value yet: subscribing starts
    /// a request.
    func subscribeToStatus() -> AsyncStream<ResourceStatus<Value>> {
        statuses.subscribe { latest in
            var seed = latest ?? Self.initialStatus
            if seed.value == nil && seed.failure == nil { seed.isLoading = true }
            return seed
        }
    }

    /// Starts with the held value, if any.
    func subscribeToValues() -> AsyncStream<Versioned<Value>> {
        values.subscribe()
    }

    /// Ends every subscription: the resource is gone.
    func finishAll() {
        statuses.finishAll()
        values.finishAll()
        observers.finishAll()
    }

    /// Publishes the machine's status, and its value when the version is new. Called on the
    /// resource's actor only, so the version check and the publication cannot interleave.
    ///
    /// Subscribers are woken only when what they see changes: a dropped push (a repeat, an
    /// older version) changes a counter of the machine, not the status.
    /// Returns whether anything was published.
    @discardableResult
    func publish(_ machine: ResourceMachine<Value>) -> Bool {
        let status = machine.status
        let droppedNow = counters.withLock { counters in
            counters.requests = machine.requestsStarted
            defer { counters.dropped = machine.outdatedDropped }
            return machine.outdatedDropped > counters.dropped
        }
        if droppedNow, let version = machine.lastDroppedVersion {
            observers.publish(.dropped(version))
        }
        if let shown = statuses.latest, shown.looksLike(status) { return false }
        statuses.publish(status)
        observers.publish(.status(status))
        if let value = status.value, value.version != values.latest?.version || value.lastMutationID != values.latest?.lastMutationID {
            values.publish(value)
        }
        return true
    }
}

/// What a watcher of a resource sees (``RemoteResource/observe()``).
package enum ResourceObservation<Value: Sendable>: Sendable {
    /// The status the resource published.
    case status(ResourceStatus<Value>)
    /// A value the resource received and dropped, being no newer than the one it held.
    case dropped(Version)
}
