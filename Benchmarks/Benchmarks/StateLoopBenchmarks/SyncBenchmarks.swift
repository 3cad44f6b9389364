import Benchmark
import BenchmarkSupport
import StateLoopSync
import Synchronization

/// `RemoteResource` (StateLoopSync, issue 4) fed from an in-memory push stream: no transport,
/// so the numbers are the resource's own cost from a push message to a subscriber.
func registerSyncBenchmarks() {
    // An iteration pushes N = 1,000 messages; every fourth one is an outdated or repeated
    // version, which the resource must drop without emitting it.
    let merge = FixtureBox<MergeFixture>()
    Benchmark(
        "Sync: versioned values merged",
        configuration: .init(scalingFactor: .kilo),
        closure: { benchmark, fixture in
            await fixture.pushAndWait(messages: benchmark.scaledIterations.count)
        },
        setup: { try await merge.set(MergeFixture.make(policy: .benchmark)) },
        teardown: { merge.take()?.stop() }
    )

    // The same with the shipped policy, whose poll timer restarts on every success: each
    // message, fresh or not, cancels the timer's effect and starts a new one.
    let mergePolling = FixtureBox<MergeFixture>()
    Benchmark(
        "Sync: versioned values merged, default policy (polling on)",
        configuration: .init(scalingFactor: .kilo),
        closure: { benchmark, fixture in
            await fixture.pushAndWait(messages: benchmark.scaledIterations.count)
        },
        setup: { try await mergePolling.set(MergeFixture.make(policy: ResourcePolicy())) },
        teardown: { mergePolling.take()?.stop() }
    )

    // An iteration is one newer version, delivered to every one of 10,000 subscriber tasks.
    let fanOut = FixtureBox<FanOutFixture>()
    Benchmark(
        "Sync: fan-out of one push to 10,000 subscribers",
        configuration: .init(
            scalingFactor: .one,
            maxDuration: .seconds(10),
            maxIterations: 1_000
        ),
        closure: { _, fixture in
            await fixture.pushAndWait()
        },
        setup: { try await fanOut.set(FanOutFixture.make(subscribers: 10_000)) },
        teardown: { fanOut.take()?.stop() }
    )
}

// MARK: Merge

/// One resource, one `values()` subscriber task, and the push stream the benchmark writes to.
final class MergeFixture: Sendable {
    private let resource: RemoteResource<Int>
    private let push: AsyncStream<PushMessage<Int>>.Continuation
    private let subscriber: Task<Void, Never>
    /// The newest version the subscriber has seen; -1 before the first.
    private let newest: SharedCount
    /// How many values the subscriber has seen.
    private let received: SharedCount
    /// The next fresh version to push, and how many values the subscriber should have seen.
    private let plan = Mutex<(next: UInt64, expected: Int)>((1, 1))

    private init(
        resource: RemoteResource<Int>,
        push: AsyncStream<PushMessage<Int>>.Continuation,
        subscriberOf values: AsyncStream<Versioned<Int>>
    ) {
        self.resource = resource
        self.push = push
        let newest = SharedCount(initial: -1)
        let received = SharedCount(initial: 0)
        self.newest = newest
        self.received = received
        subscriber = Task {
            for await value in values {
                received.advance(by: 1)
                newest.advance(to: Int(value.version.counter))
            }
        }
    }

    static func make(policy: ResourcePolicy) async throws -> MergeFixture {
        let (pushes, push) = AsyncStream.makeStream(of: PushMessage<Int>.self)
        let resource = RemoteResource(
            sources: ResourceSources(pull: { Versioned(0, version: Version(counter: 0)) }, push: pushes),
            policy: policy
        )
        let fixture = MergeFixture(resource: resource, push: push, subscriberOf: resource.values())
        // The pull's answer (version 0) is the subscriber's first value.
        try await fixture.newest.wait(untilCount: 0, orFailAfter: .seconds(10), "the first pull never arrived")
        return fixture
    }

    /// Pushes `messages` messages, every fourth one not newer than the value held (alternately
    /// the newest version again and one three versions back), and returns once the subscriber
    /// has received the last fresh one. The last message is always fresh, so that nothing of
    /// this iteration is left for the next one.
    func pushAndWait(messages: Int) async {
        let (first, expectedBefore) = plan.withLock { $0 }
        // The last message is fresh: `messages` messages hold this many fresh versions.
        let fresh = (0..<messages).count { $0 == messages - 1 || $0 % 8 != 3 && $0 % 8 != 7 }
        newest.expect(Int(first) + fresh - 1)
        var next = first
        for index in 0..<messages {
            let version: UInt64
            if index % 8 == 3 && index != messages - 1 {
                version = next - 1  // duplicate of the newest
            } else if index % 8 == 7 && index != messages - 1 {
                version = next - 3  // outdated
            } else {
                version = next
                next += 1
            }
            push.yield(.value(Versioned(index, version: Version(counter: version))))
        }
        let expected = expectedBefore + fresh
        plan.withLock { $0 = (next, expected) }
        await newest.wait()
        // The subscriber must have seen every fresh version once, and nothing else.
        precondition(received.current == expected, "a value was lost or repeated")
    }

    func stop() {
        subscriber.cancel()
        push.finish()
    }
}

// MARK: Fan-out

/// One resource and `subscribers` tasks, each iterating a `values()` stream of its own and
/// counting into one shared tally.
final class FanOutFixture: Sendable {
    private let resource: RemoteResource<Int>
    private let push: AsyncStream<PushMessage<Int>>.Continuation
    private let tasks: [Task<Void, Never>]
    private let arrivals: SharedCount
    private let subscriberCount: Int
    private let next = Mutex<UInt64>(1)

    private init(
        resource: RemoteResource<Int>,
        push: AsyncStream<PushMessage<Int>>.Continuation,
        subscribers: Int
    ) {
        self.resource = resource
        self.push = push
        subscriberCount = subscribers
        let arrivals = SharedCount(initial: 0)
        self.arrivals = arrivals
        // Subscribed here, synchronously, so that every subscription exists when setup ends.
        tasks = (0..<subscribers).map { _ in
            let values = resource.values()
            return Task {
                for await _ in values {
                    arrivals.advance(by: 1)
                }
            }
        }
    }

    static func make(subscribers: Int) async throws -> FanOutFixture {
        let (pushes, push) = AsyncStream.makeStream(of: PushMessage<Int>.self)
        let resource = RemoteResource(
            sources: ResourceSources(pull: { Versioned(0, version: Version(counter: 0)) }, push: pushes),
            policy: .benchmark
        )
        let fixture = FanOutFixture(resource: resource, push: push, subscribers: subscribers)
        // Every subscriber first gets version 0: from the pull, or as the held value.
        try await fixture.arrivals.wait(
            untilCount: subscribers, orFailAfter: .seconds(30), "not every subscriber got the first value"
        )
        return fixture
    }

    /// Pushes one newer version and returns once every subscriber has received it.
    func pushAndWait() async {
        let version = next.withLock { next in
            defer { next += 1 }
            return next
        }
        // Each subscriber receives version 0 and then versions 1...version, once each.
        arrivals.expect(subscriberCount * (Int(version) + 1))
        push.yield(.value(Versioned(Int(version), version: Version(counter: version))))
        await arrivals.wait()
    }

    func stop() {
        for task in tasks { task.cancel() }
        push.finish()
    }
}

// MARK: Shared helpers

extension ResourcePolicy {
    /// No polling, so that no timer task restarts on every value; the rest as shipped.
    static var benchmark: ResourcePolicy {
        var policy = ResourcePolicy()
        policy.pollInterval = nil
        return policy
    }
}

/// A count that subscriber tasks move forward and one benchmark task waits on.
///
/// Lock-free for the subscribers: they take the lock only when the count reaches the target.
final class SharedCount: Sendable {
    private let count: Atomic<Int>
    private let target = Atomic<Int>(Int.max)
    private let waiter = Mutex<CheckedContinuation<Void, Never>?>(nil)

    init(initial: Int) {
        count = Atomic(initial)
    }

    var current: Int {
        count.load(ordering: .sequentiallyConsistent)
    }

    /// For any number of writers: adds `delta`.
    func advance(by delta: Int) {
        let (_, now) = count.wrappingAdd(delta, ordering: .sequentiallyConsistent)
        wakeIfReached(now)
    }

    /// For one writer: records a new, higher count.
    func advance(to value: Int) {
        count.store(value, ordering: .sequentiallyConsistent)
        wakeIfReached(value)
    }

    private func wakeIfReached(_ now: Int) {
        guard now >= target.load(ordering: .sequentiallyConsistent) else { return }
        waiter.withLock { $0.take() }?.resume()
    }

    /// Sets the count that ``wait()`` waits for. Set it before causing the writes, so that
    /// writers before the goal never touch the lock.
    func expect(_ goal: Int) {
        target.store(goal, ordering: .sequentiallyConsistent)
    }

    /// Returns once the count has reached the goal given to ``expect(_:)``. One waiter at a time.
    ///
    /// No wake-up is lost: a writer that reaches the goal takes the lock after its write, and
    /// the waiter reads the count under the same lock before it parks.
    func wait() async {
        let goal = target.load(ordering: .sequentiallyConsistent)
        await withCheckedContinuation { continuation in
            let reached = waiter.withLock { waiter -> Bool in
                if current >= goal { return true }
                waiter = continuation
                return false
            }
            if reached { continuation.resume() }
        }
    }

    /// For setup: polls until the count is at least `goal`, and fails after `limit`, so that a
    /// broken fixture stops the benchmark instead of hanging the run.
    func wait(untilCount goal: Int, orFailAfter limit: Duration, _ message: String) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + limit
        while current < goal {
            guard clock.now < deadline else { throw SetupFailure(message: message) }
            try await Task.sleep(for: .milliseconds(1))
        }
    }
}
