import AsyncAlgorithms
import StateLoop
import StateLoopWire

extension Feedback {
    /// Plugs a remote resource into a system: while the system runs, it subscribes to the
    /// resource and sends `event` for every status, so the screen state lives in the system.
    public static func resource<Value: Sendable>(
        _ resource: RemoteResource<Value>,
        event: @escaping @Sendable (ResourceStatus<Value>) -> Event
    ) -> Feedback {
        forwarding(resource.updates, event: event)
    }

    /// Plugs an optimistic resource into a system: sends `event` for every status (the value
    /// shown, with the pending mutations on top) while the system runs.
    public static func resource<M: Mutation>(
        _ resource: OptimisticResource<M>,
        event: @escaping @Sendable (OptimisticStatus<M>) -> Event
    ) -> Feedback {
        forwarding(resource.updates, event: event)
    }

    /// Sends `event` for each mutation of `resource` that the server refuses, once, while the
    /// system runs: the place for "could not save" messages.
    public static func refusals<M: Mutation>(
        of resource: OptimisticResource<M>,
        event: @escaping @Sendable (RefusedMutation<M>) -> Event
    ) -> Feedback {
        forwarding(resource.refusals, event: event)
    }

    /// A loop that runs for the system's whole life, subscribing once and turning each element
    /// into an event.
    private static func forwarding<Element: Sendable>(
        _ subscribe: @escaping @Sendable () -> AsyncStream<Element>,
        event: @escaping @Sendable (Element) -> Event
    ) -> Feedback {
        .react(query: { _ in true }) { _, send in
            for await element in subscribe() {
                await send(event(element))
            }
        }
    }
}

/// Combines the values of two resources into one screen state: emits once both have a value,
/// then whenever either changes, with the other's latest value.
///
/// ```swift
/// for await screen in combineLatest(driverMode, rideStatus, into: Screen.init) { show(screen) }
/// ```
public func combineLatest<A: Sendable, B: Sendable, Combined: Sendable>(
    _ first: RemoteResource<A>,
    _ second: RemoteResource<B>,
    into combine: @escaping @Sendable (Versioned<A>, Versioned<B>) -> Combined
) -> AsyncStream<Combined> {
    let pairs = AsyncAlgorithms.combineLatest(first.values(), second.values())
    return AsyncStream { continuation in
        let task = Task {
            // The bases never throw: `values()` streams only finish.
            for try await (a, b) in pairs {
                continuation.yield(combine(a, b))
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
    }
}
