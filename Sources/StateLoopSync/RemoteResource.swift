import StateLoop
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
        let host = ResourceHost<Value>()
        Task {
            await host.run(commands: commandStream, sources: sources, policy: policy, clock: clock) { machine in
                subscribers.publish(machine)
            }
            subscribers.finishAll()
        }
    }

    deinit {
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
    /// newer version. Outdated and repeated versions are never emitted.
    public func values() -> AsyncStream<Versioned<Value>> {
        subscribers.subscribeToValues()
    }

    /// Fetches now: cancels any wait, clears a failure, joins a request already in flight.
    public func refresh() {
        commands.yield(.refresh)
    }
}

/// The subscribers of a resource and the last status they were given.
///
/// Threading: guarded by a mutex, so subscribing works from any isolation and synchronously.
/// Subscriptions and unsubscriptions reach the resource's logic through `commands`, one
/// ordered stream, so a quick subscribe-then-leave is never seen in the wrong order.
final class ResourceSubscribers<Value: Sendable>: Sendable {
    private struct Registry {
        var status = ResourceStatus<Value>(
            value: nil, isLoading: false, isSlow: false, isOffline: false, isRetrying: false, failure: nil
        )
        var statusSubscribers: [UInt64: AsyncStream<ResourceStatus<Value>>.Continuation] = [:]
        var valueSubscribers: [UInt64: AsyncStream<Versioned<Value>>.Continuation] = [:]
        var lastID: UInt64 = 0
        var requestsStarted = 0
    }

    private let registry = Mutex(Registry())
    private let commands: AsyncStream<ResourceMachine<Value>.Event>.Continuation

    init(commands: AsyncStream<ResourceMachine<Value>.Event>.Continuation) {
        self.commands = commands
    }

    var status: ResourceStatus<Value> {
        registry.withLock { $0.status }
    }

    var requestsStarted: Int {
        registry.withLock { $0.requestsStarted }
    }

    func subscribeToStatus() -> AsyncStream<ResourceStatus<Value>> {
        subscribe(to: \.statusSubscribers, bufferingPolicy: .bufferingNewest(1)) { registry in
            var seed = registry.status
            if seed.value == nil && seed.failure == nil { seed.isLoading = true }
            return seed
        }
    }

    func subscribeToValues() -> AsyncStream<Versioned<Value>> {
        subscribe(to: \.valueSubscribers, bufferingPolicy: .unbounded) { $0.status.value }
    }

    /// Registers a new stream in `subscribers`, starting with `seed` when there is one, and
    /// tells the machine of the arrival and, when the stream ends, of the departure.
    private func subscribe<Element: Sendable>(
        to subscribers: WritableKeyPath<Registry, [UInt64: AsyncStream<Element>.Continuation]> & Sendable,
        bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy,
        seed: (Registry) -> Element?
    ) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: bufferingPolicy)
        let id = registry.withLock { registry -> UInt64 in
            registry.lastID += 1
            if let first = seed(registry) { continuation.yield(first) }
            registry[keyPath: subscribers][registry.lastID] = continuation
            return registry.lastID
        }
        commands.yield(.subscribed)
        continuation.onTermination = { [self] _ in
            registry.withLock { _ = $0[keyPath: subscribers].removeValue(forKey: id) }
            commands.yield(.unsubscribed)
        }
        return stream
    }

    /// Ends every subscription: the resource is gone.
    func finishAll() {
        let (statuses, values) = registry.withLock { registry in
            defer {
                registry.statusSubscribers = [:]
                registry.valueSubscribers = [:]
            }
            return (Array(registry.statusSubscribers.values), Array(registry.valueSubscribers.values))
        }
        statuses.forEach { $0.finish() }
        values.forEach { $0.finish() }
    }

    func publish(_ machine: ResourceMachine<Value>) {
        let status = machine.status
        registry.withLock { registry in
            let isNewVersion = status.value.map { $0.version != registry.status.value?.version } ?? false
            registry.status = status
            registry.requestsStarted = machine.requestsStarted
            for continuation in registry.statusSubscribers.values {
                continuation.yield(status)
            }
            if isNewVersion, let value = status.value {
                for continuation in registry.valueSubscribers.values {
                    continuation.yield(value)
                }
            }
        }
    }
}

/// The actor a resource's system lives on.
actor ResourceHost<Value: Sendable> {
    func run(
        commands: AsyncStream<ResourceMachine<Value>.Event>,
        sources: ResourceSources<Value>,
        policy: ResourcePolicy,
        clock: any Clock<Duration>,
        publish: @escaping @Sendable (ResourceMachine<Value>) -> Void
    ) async {
        let system = System(
            initialState: ResourceMachine<Value>(),
            reduce: ResourceMachine<Value>.reduce(policy: policy),
            feedbacks: ResourceMachine<Value>.feedbacks(sources: sources, policy: policy, clock: clock)
        )
        let subscription = system.observe(publish)
        for await command in commands {
            system.send(command)
        }
        subscription.cancel()
        system.stop()
    }
}
