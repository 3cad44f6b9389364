import StateLoopWire
import Synchronization

/// The subscribers of a stream of elements, registered synchronously from any isolation.
///
/// Threading: the registry is guarded by a mutex. Elements are yielded outside it, so a slow
/// fan-out to many subscribers never blocks a subscription or a read of ``latest``.
package final class Subscribers<Element: Sendable>: Sendable {
    private struct Registry {
        var latest: Element?
        var continuations: [UInt64: AsyncStream<Element>.Continuation] = [:]
        var lastID: UInt64 = 0
        var isFinished = false
        /// Published while nobody subscribed, for the next subscriber (see `holdsUndelivered`);
        /// the newest `undeliveredLimit`, so that an app that never subscribes does not grow.
        var undelivered: [Element] = []
    }

    private let registry = Mutex(Registry())
    /// How many elements wait for a first subscriber, at most.
    static var undeliveredLimit: Int { 1_000 }
    private let replaysLatest: Bool
    private let holdsUndelivered: Bool
    private let bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy
    private let onArrival: @Sendable () -> Void
    private let onDeparture: @Sendable () -> Void

    /// - Parameters:
    ///   - replaysLatest: whether a new subscriber first gets the latest element (states), or
    ///     only the elements published after it arrived (events).
    ///   - holdsUndelivered: whether elements published while nobody subscribes wait for the
    ///     next subscriber (reports that must reach someone: a failure found at launch, before
    ///     the screen subscribed), or are gone.
    ///   - onArrival, onDeparture: told of every subscriber that arrives and leaves, in order.
    package init(
        replaysLatest: Bool,
        holdsUndelivered: Bool = false,
        bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy,
        onArrival: @escaping @Sendable () -> Void = {},
        onDeparture: @escaping @Sendable () -> Void = {}
    ) {
        self.replaysLatest = replaysLatest
        self.holdsUndelivered = holdsUndelivered
        self.bufferingPolicy = bufferingPolicy
        self.onArrival = onArrival
        self.onDeparture = onDeparture
    }

    /// The element published last.
    package var latest: Element? {
        registry.withLock { $0.latest }
    }

    /// A new subscription; `seed` may adjust the replayed latest element.
    package func subscribe(seed: (Element?) -> Element? = { $0 }) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: bufferingPolicy)
        let id = registry.withLock { registry -> UInt64? in
            if replaysLatest, let first = seed(registry.latest) { continuation.yield(first) }
            for element in registry.undelivered { continuation.yield(element) }
            registry.undelivered = []
            guard !registry.isFinished else { return nil }
            registry.lastID += 1
            registry.continuations[registry.lastID] = continuation
            return registry.lastID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        onArrival()
        continuation.onTermination = { [self] _ in
            registry.withLock { _ = $0.continuations.removeValue(forKey: id) }
            onDeparture()
        }
        return stream
    }

    package func publish(_ element: Element) {
        let continuations = registry.withLock { registry in
            registry.latest = element
            if holdsUndelivered && registry.continuations.isEmpty && !registry.isFinished {
                registry.undelivered.append(element)
                if registry.undelivered.count > Self.undeliveredLimit {
                    registry.undelivered.removeFirst()
                }
            }
            return Array(registry.continuations.values)
        }
        for continuation in continuations {
            continuation.yield(element)
        }
    }

    /// Ends every subscription; later ones end at once.
    package func finishAll() {
        let continuations = registry.withLock { registry in
            registry.isFinished = true
            defer { registry.continuations = [:] }
            return Array(registry.continuations.values)
        }
        for continuation in continuations { continuation.finish() }
    }
}
