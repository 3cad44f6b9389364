import Synchronization

/// A clock whose time is the running ``Simulation``'s: a sleep registers with the simulation
/// and ends when simulated time reaches its deadline, which happens as soon as nothing else is
/// ready. Give it to everything the scenario builds (resources, policies, servers) in place of
/// `ContinuousClock`.
///
/// Sleeping outside a simulation is a programming error: it stops the process with a message.
public struct SimulationClock: Clock, Sendable {
    /// An instant of simulated time: the time since the simulation started.
    public struct Instant: InstantProtocol, Sendable {
        /// The simulated time since the simulation started.
        public let offset: Duration

        public init(offset: Duration) {
            self.offset = offset
        }

        public func advanced(by duration: Duration) -> Instant {
            Instant(offset: offset + duration)
        }

        public func duration(to other: Instant) -> Duration {
            other.offset - offset
        }

        public static func < (left: Instant, right: Instant) -> Bool {
            left.offset < right.offset
        }
    }

    public init() {}

    public var now: Instant {
        Instant(offset: Self.simulation().now)
    }

    /// One nanosecond: the smallest step of simulated time.
    public var minimumResolution: Duration { .nanoseconds(1) }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let simulation = Self.simulation()
        let sleeper = Sleeper()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // A task cancelled before it slept does not sleep: the check and the
                // registration hold the lock the cancellation takes.
                let slept = sleeper.state.withLock { state in
                    guard !state.cancelled else { return false }
                    state.number = simulation.sleep(until: deadline.offset, continuation)
                    return true
                }
                if !slept { continuation.resume() }
            }
        } onCancel: {
            let number = sleeper.state.withLock { state in
                state.cancelled = true
                return state.number
            }
            if let number { simulation.wakeEarly(number) }
        }
        try Task.checkCancellation()
    }

    private static func simulation() -> Simulation {
        guard let simulation = Simulation.current else {
            fatalError("SimulationClock used outside Simulation.run: give it only to what a simulated scenario builds")
        }
        return simulation
    }
}

/// A sleep's registration and its cancellation, under one lock: the number it slept under,
/// for the cancellation to wake it, and whether it was cancelled, for it not to sleep.
private final class Sleeper: Sendable {
    let state = Mutex<(number: UInt64?, cancelled: Bool)>((nil, false))
}
