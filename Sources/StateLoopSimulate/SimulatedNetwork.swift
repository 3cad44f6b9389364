import StateLoopSimulation
import StateLoopSync

/// The network between a scenario's clients and its server, on simulated time: each trip takes
/// 10 to 310 ms, fails while an outage lasts, and may be lost; each push is delayed on its own
/// (so that pushes overtake one another) and some are lost. Every draw comes from the
/// simulation's seed.
struct SimulatedNetwork: Sendable {
    let simulation: Simulation
    let clock: SimulationClock
    /// While simulated time is in it, every trip fails.
    var outage: Range<Duration>?
    /// From this simulated time on, nothing is lost: the faults have stopped, and what a
    /// scenario checks after it is that everything settles.
    var calmFrom: Duration?

    /// The clients' policy: backoffs without jitter (the seed decides enough), a poll every
    /// 20 s, a request given up after 5 s.
    static var policy: ResourcePolicy {
        var policy = ResourcePolicy()
        policy.jitter = { backoff in backoff }
        policy.pollInterval = .seconds(20)
        policy.requestTimeout = .seconds(5)
        return policy
    }

    /// One way across: its latency, then a failure if the network is out.
    func travel() async throws {
        try await clock.sleep(for: .milliseconds(10 + simulation.random(in: 0..<300)))
        if let outage, outage.contains(clock.now.offset) { throw LostRequest() }
    }

    /// Throws ``LostRequest`` once in `chances` draws, until the network is calm.
    func lose(oneIn chances: Int) throws {
        if simulation.random(in: 0..<chances) == 0, !isCalm { throw LostRequest() }
    }

    /// Whether the faults have stopped.
    private var isCalm: Bool {
        calmFrom.map { clock.now.offset >= $0 } ?? false
    }

    /// Hands `message` to `delivery` after a delay of its own (up to 800 ms), unless it is lost
    /// (once in 20, until the network is calm).
    func push<Message: Sendable>(_ message: Message, to delivery: AsyncStream<Message>.Continuation) {
        let delay = Duration.milliseconds(simulation.random(in: 0..<800))
        let lost = simulation.random(in: 0..<20) == 0 && !isCalm
        let clock = clock
        Task {
            try? await clock.sleep(for: delay)
            if !lost { delivery.yield(message) }
        }
    }
}

/// A request or an answer the network lost.
struct LostRequest: Error {}
