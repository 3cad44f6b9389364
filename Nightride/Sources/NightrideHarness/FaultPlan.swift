import NightrideServer
import StateLoopWire

/// Network trouble the server inflicts on its clients, drawn from a seed so a run can be
/// replayed: slow and reordered HTTP responses, lost pushes, push sockets cut every so often,
/// and (optionally) 503 answers.
///
/// Each decision is drawn from the seed and what it concerns (the n-th request of a route, a
/// given version pushed on a given connection), not from a shared stream, so the same scenario
/// meets the same faults even when requests interleave differently.
public struct FaultPlan: Sendable, Hashable {
    /// The seed every decision derives from.
    public var seed: UInt64
    /// How long an HTTP response is held back once computed, drawn uniformly from this range:
    /// the spread is what reorders responses and lets pushes overtake them.
    public var latency: ClosedRange<Duration>
    /// The chance that one push to one socket is silently dropped.
    public var pushDropProbability: Double
    /// How long a push socket lives before the server cuts it, drawn per connection; `nil`
    /// never cuts.
    public var disconnectAfter: ClosedRange<Duration>?
    /// The chance that an HTTP request is answered 503 (with `Retry-After: 1`) without being
    /// handled.
    public var failureProbability: Double
    /// The chance that a mutation (a `POST` other than `/login`) is applied but its answer is
    /// replaced by a 503, as when the connection drops on the way back.
    public var lostAnswerProbability: Double
    /// The chance that a push is followed by a `{"changed": true}` hint, which makes the client
    /// pull while it may already be pulling.
    public var hintProbability: Double

    /// A plan; the defaults give visible but survivable trouble.
    public init(
        seed: UInt64,
        latency: ClosedRange<Duration> = .milliseconds(10)...(.milliseconds(400)),
        pushDropProbability: Double = 0.2,
        disconnectAfter: ClosedRange<Duration>? = .seconds(5)...(.seconds(20)),
        failureProbability: Double = 0,
        lostAnswerProbability: Double = 0,
        hintProbability: Double = 0
    ) {
        self.seed = seed
        self.latency = latency
        self.pushDropProbability = pushDropProbability
        self.disconnectAfter = disconnectAfter
        self.failureProbability = failureProbability
        self.lostAnswerProbability = lostAnswerProbability
        self.hintProbability = hintProbability
    }

    /// The delay of the `number`-th response (from 1) of `route`.
    func latency(ofRequest number: Int, on route: String) -> Duration {
        Self.pick(in: latency, random.unit("latency \(route) \(number)"))
    }

    /// Whether the `number`-th request of `route` gets a 503.
    func fails(request number: Int, on route: String) -> Bool {
        failureProbability > 0 && random.unit("failure \(route) \(number)") < failureProbability
    }

    /// Whether the answer of the `number`-th request of `route`, already applied, is lost.
    func losesAnswer(request number: Int, on route: String) -> Bool {
        lostAnswerProbability > 0 && random.unit("lost answer \(route) \(number)") < lostAnswerProbability
    }

    /// Whether the push of `version` on the `connection`-th socket of `user`'s `resource` is
    /// followed by a hint.
    func addsHint(after version: Version, resource: UserValue, user: String, connection: Int) -> Bool {
        hintProbability > 0
            && random.unit("hint \(user) \(resource) \(connection) \(version.counter)") < hintProbability
    }

    /// Whether `version` of `user`'s `resource` is lost on the `connection`-th socket of that
    /// user and resource. Keyed on the counter only: the epoch changes with every server start,
    /// and the same scenario should lose the same pushes on each.
    func dropsPush(of version: Version, resource: UserValue, user: String, connection: Int) -> Bool {
        pushDropProbability > 0
            && random.unit("push \(user) \(resource) \(connection) \(version.counter)") < pushDropProbability
    }

    /// How long the `connection`-th socket of `user`'s `resource` lives (its `round`-th lease,
    /// when faults were off as an earlier one ran out).
    func disconnectDelay(user: String, resource: UserValue, connection: Int, round: Int) -> Duration? {
        disconnectAfter.map { Self.pick(in: $0, random.unit("disconnect \(user) \(resource) \(connection) \(round)")) }
    }

    private var random: SeededRandom { SeededRandom(seed: seed) }

    private static func pick(in range: ClosedRange<Duration>, _ unit: Double) -> Duration {
        let span = range.upperBound - range.lowerBound
        let (seconds, attoseconds) = span.components
        let nanoseconds = Double(seconds) * 1e9 + Double(attoseconds) / 1e9
        return range.lowerBound + .nanoseconds(Int64(nanoseconds * unit))
    }
}
