import AsyncAlgorithms
import StateLoop

extension Feedback {
    /// Plugs a remote resource into a system: while the system runs, it subscribes to the
    /// resource and sends `event` for every status, so the screen state lives in the system.
    public static func resource<Value: Sendable>(
        _ resource: RemoteResource<Value>,
        event: @escaping @Sendable (ResourceStatus<Value>) -> Event
    ) -> Feedback {
        .react(query: { _ in true }) { _, send in
            for await status in resource.updates() {
                await send(event(status))
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
