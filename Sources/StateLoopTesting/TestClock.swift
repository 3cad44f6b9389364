import Synchronization

/// A clock whose time moves only when the test moves it.
///
/// Effects sleep on it like on any clock. ``advance(by:)`` moves time forward, wakes the sleepers
/// whose deadline has come, one deadline at a time and in order, and after each wake-up waits
/// until every test system attached to the clock has settled, so what a woken effect does
/// (including sleeping again before the target time) is done when `advance` returns.
///
/// ```swift
/// let clock = TestClock()
/// let store = await TestSystem(initialState: Search(), reduce: Search.reduce,
///                              feedbacks: Search.feedbacks(api: fake, clock: clock), clock: clock)
/// await store.send(.typed("swi")) { $0.query = "swi" }
/// await clock.advance(by: .milliseconds(300))
/// await store.receive(.loaded(["swift"])) { $0.results = ["swift"] }
/// ```
public final class TestClock: Clock, Sendable {
    /// A point in the clock's time: the duration since the clock was created.
    public struct Instant: InstantProtocol, Hashable, Sendable {
        /// Time since the start of the clock.
        public let offset: Duration

        /// An instant `offset` after the start of the clock.
        public init(offset: Duration = .zero) {
            self.offset = offset
        }

        public func advanced(by duration: Duration) -> Instant {
            Instant(offset: offset + duration)
        }

        public func duration(to other: Instant) -> Duration {
            other.offset - offset
        }

        public static func < (lhs: Instant, rhs: Instant) -> Bool {
            lhs.offset < rhs.offset
        }
    }

    private struct Sleeper {
        let id: UInt64
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct Storage {
        var now = Instant()
        var sleepers: [Sleeper] = []
        var lastID: UInt64 = 0
        var settleHooks: [@Sendable () async -> Void] = []
        /// Tasks in ``waitForSleepers(_:)``, woken whenever a sleeper arrives.
        var sleeperWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let storage = Mutex(Storage())

    /// A clock at time zero.
    public init() {}

    /// The current time of the clock.
    public var now: Instant {
        storage.withLock { $0.now }
    }

    /// Zero: the clock wakes a sleeper exactly at its deadline.
    public var minimumResolution: Duration {
        .zero
    }

    /// How many tasks are sleeping on the clock.
    public var sleeperCount: Int {
        storage.withLock { $0.sleepers.count }
    }

    /// Returns once at least `count` tasks are sleeping on the clock: advance after this to be
    /// sure that an effect started elsewhere (on the main actor, say) has gone to sleep first.
    public func waitForSleepers(_ count: Int = 1) async {
        while sleeperCount < count {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let ready = storage.withLock { storage -> Bool in
                    if storage.sleepers.count >= count { return true }
                    storage.sleeperWaiters.append(waiter)
                    return false
                }
                if ready { waiter.resume() }
            }
        }
    }

    /// Suspends until the clock reaches `deadline`, or throws `CancellationError` when the task
    /// is cancelled first. A deadline that has passed returns at once.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let id = storage.withLock { storage -> UInt64 in
            storage.lastID += 1
            return storage.lastID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (outcome, waiters) = storage.withLock { storage -> (Result<Void, any Error>?, [CheckedContinuation<Void, Never>]) in
                    if Task.isCancelled { return (.failure(CancellationError()), []) }
                    if deadline <= storage.now { return (.success(()), []) }
                    storage.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    defer { storage.sleeperWaiters = [] }
                    return (nil, storage.sleeperWaiters)
                }
                if let outcome {
                    continuation.resume(with: outcome)
                }
                for waiter in waiters {
                    waiter.resume()
                }
            }
        } onCancel: {
            let cancelled = storage.withLock { storage -> Sleeper? in
                guard let index = storage.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return storage.sleepers.remove(at: index)
            }
            cancelled?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward by `duration`, waking every sleeper on the way. See ``advance(to:)``.
    public func advance(by duration: Duration) async {
        await advance(to: now.advanced(by: duration))
    }

    /// Moves time forward to `deadline`. Sleepers wake in deadline order (ties in the order they
    /// went to sleep), time standing at each one's deadline as it wakes; after each wake-up the
    /// attached test systems settle. Moving backwards does nothing.
    public func advance(to deadline: Instant) async {
        while let due = takeNextSleepers(until: deadline) {
            for sleeper in due {
                sleeper.continuation.resume()
            }
            await settle()
        }
        storage.withLock { storage in
            if storage.now < deadline { storage.now = deadline }
        }
        await settle()
    }

    /// Advances to the deadline of each sleeper in turn until nobody sleeps, at most
    /// `maxWakeUps` times (a polling loop would otherwise never end).
    public func run(maxWakeUps: Int = 1_000) async {
        var wakeUps = 0
        while wakeUps < maxWakeUps, let next = storage.withLock({ $0.sleepers.map(\.deadline).min() }) {
            await advance(to: next)
            wakeUps += 1
        }
    }

    /// Makes ``advance(by:)`` wait for `settle` after every wake-up. Test systems attach
    /// themselves to the clock they are given.
    func onAdvance(_ settle: @escaping @Sendable () async -> Void) {
        storage.withLock { $0.settleHooks.append(settle) }
    }

    private func settle() async {
        let hooks = storage.withLock { $0.settleHooks }
        for hook in hooks {
            await hook()
        }
    }

    /// Removes and returns the sleepers with the earliest deadline if it is not after `deadline`,
    /// and moves the clock to that deadline.
    private func takeNextSleepers(until deadline: Instant) -> [Sleeper]? {
        storage.withLock { storage in
            guard let earliest = storage.sleepers.map(\.deadline).min(), earliest <= deadline else {
                return nil
            }
            storage.now = max(storage.now, earliest)
            let due = storage.sleepers.filter { $0.deadline == earliest }
            storage.sleepers.removeAll { $0.deadline == earliest }
            return due
        }
    }
}
