import Benchmark
import BenchmarkSupport
import StateLoop
import StateLoopSync
import Synchronization

/// One push from the resource's push stream to what a screen reads, one push at a time: the
/// latency of the path, not its throughput. Three depths in one run: the resource's own
/// `values()` subscriber (the baseline), an optimistic resource's `updates()` subscriber, and a
/// system's state that follows the optimistic resource through `Feedback.resource` (a screen).
func registerPushPathBenchmarks() {
    for depth in PushPathFixture.Depth.allCases {
        let box = FixtureBox<PushPathFixture>()
        Benchmark(
            "Sync: one push to \(depth.name)",
            configuration: .init(metrics: [.wallClock, .mallocCountTotal], scalingFactor: .one, maxDuration: .seconds(10), maxIterations: 10_000),
            closure: { _, fixture in
                await fixture.pushAndWait()
            },
            setup: { try await box.set(PushPathFixture.make(depth)) },
            teardown: { await box.take()?.stop() }
        )
    }
}

/// A resource fed from an in-memory push stream, and the reader at the chosen depth.
final class PushPathFixture: Sendable {
    /// Where the push is read.
    enum Depth: CaseIterable {
        /// The resource's `values()` subscriber.
        case resource
        /// An optimistic resource's `updates()` subscriber.
        case optimistic
        /// A system's state, following the optimistic resource.
        case screen

        var name: String {
            switch self {
            case .resource: "a resource's subscriber (baseline)"
            case .optimistic: "an optimistic resource's subscriber"
            case .screen: "a system's state through an optimistic resource"
            }
        }
    }

    private let push: AsyncStream<PushMessage<Int>>.Continuation
    private let resource: RemoteResource<Int>
    private let optimistic: OptimisticResource<SetInt>?
    private let reader: Reader
    /// The newest version the reader has seen.
    private let newest: SharedCount
    private let next = Mutex<UInt64>(1)

    private enum Reader: Sendable {
        case task(Task<Void, Never>)
        case system(ScreenHost)
    }

    private init(
        push: AsyncStream<PushMessage<Int>>.Continuation, resource: RemoteResource<Int>, optimistic: OptimisticResource<SetInt>?,
        reader: Reader, newest: SharedCount
    ) {
        self.push = push
        self.resource = resource
        self.optimistic = optimistic
        self.reader = reader
        self.newest = newest
    }

    static func make(_ depth: Depth) async throws -> PushPathFixture {
        let (pushes, push) = AsyncStream.makeStream(of: PushMessage<Int>.self)
        let resource = RemoteResource(
            sources: ResourceSources(pull: { Versioned(0, version: Version(counter: 0)) }, push: pushes),
            policy: .benchmark
        )
        let newest = SharedCount(initial: -1)
        let optimistic =
            depth == .resource
            ? nil : OptimisticResource(resource: resource, policy: .benchmark) { (_: SetInt, _: MutationID) in Version(counter: 0) }
        let reader: Reader
        switch depth {
        case .resource:
            let values = resource.values()
            reader = .task(Task { for await value in values { newest.advance(to: Int(value.version.counter)) } })
        case .optimistic:
            let updates = optimistic!.updates()
            reader = .task(
                Task {
                    for await status in updates {
                        if let version = status.confirmed?.version { newest.advance(to: Int(version.counter)) }
                    }
                })
        case .screen:
            reader = .system(await ScreenHost(following: optimistic!, into: newest))
        }
        let fixture = PushPathFixture(push: push, resource: resource, optimistic: optimistic, reader: reader, newest: newest)
        try await newest.wait(untilCount: 0, orFailAfter: .seconds(10), "the first pull never reached the reader")
        return fixture
    }

    /// Pushes one newer version and returns once the reader has it.
    func pushAndWait() async {
        let version = next.withLock { next in
            defer { next += 1 }
            return next
        }
        newest.expect(Int(version))
        push.yield(.value(Versioned(Int(version), version: Version(counter: version))))
        await newest.wait()
    }

    func stop() async {
        switch reader {
        case .task(let task): task.cancel()
        case .system(let host): await host.stop()
        }
        optimistic?.stop()
        resource.stop()
        push.finish()
    }
}

/// A mutation of an `Int` resource the benchmark never makes: the optimistic layer's type.
struct SetInt: Mutation {
    var value: Int
    func apply(to current: inout Int) { current = value }
}

/// A system on the benchmark actor whose state follows an optimistic resource, as a screen's
/// does, and whose observer reports each confirmed version.
@BenchActor
final class ScreenHost: Sendable {
    private let system: System<ResourceSnapshot<Int>, ResourceSnapshot<Int>>
    private let subscription: StateSubscription

    init(following resource: OptimisticResource<SetInt>, into newest: SharedCount) {
        system = System(
            initialState: ResourceSnapshot<Int>(),
            reduce: { state, latest in state.update(to: latest) },
            feedbacks: [.resource(resource) { ResourceSnapshot($0) }]
        )
        subscription = system.observe { state in
            if let version = state.confirmedVersion { newest.advance(to: Int(version.counter)) }
        }
    }

    func stop() {
        system.stop()
    }
}
