import StateLoopServerTesting
import StateLoopSimulation
import StateLoopSync
import StateLoopSyncTransports

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
        try await clock.sleep(for: latency())
        if isOut { throw LostRequest() }
    }

    /// How long the next trip takes: 10 to 310 ms.
    func latency() -> Duration {
        .milliseconds(10 + simulation.random(in: 0..<300))
    }

    /// Whether the network is out now.
    var isOut: Bool {
        outage.map { $0.contains(clock.now.offset) } ?? false
    }

    /// Throws ``LostRequest`` once in `chances` draws, until the network is calm.
    func lose(oneIn chances: Int) throws {
        if loses(oneIn: chances) { throw LostRequest() }
    }

    /// Whether what crosses now is lost: once in `chances` draws, until the network is calm.
    func loses(oneIn chances: Int) -> Bool {
        simulation.random(in: 0..<chances) == 0 && !isCalm
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

// MARK: As a transport

extension SimulatedNetwork {
    /// This network between `device`'s app and `server`: each request travels, and may be lost
    /// on its way or its answer on the way back (a mutation applied and its answer lost is sent
    /// again); nothing crosses while the network is out; push messages are lost now and then.
    /// Until the network is calm.
    func between(_ device: Int, and server: any SyncTransport) -> LossyTransport {
        LossyTransport(over: server, clock: clock, latency: latency) { leg, request in
            switch leg {
            case .request:
                simulation.record("device \(device): \(request.method) \(request.url.path)" + (request.headers["Mutation-ID"].map { " \($0)" } ?? ""))
                return isOut || loses(oneIn: request.method == "GET" ? 10 : 8)
            case .answer:
                return isOut || loses(oneIn: 8)
            case .opening:
                return isOut
            case .message:
                let lost = loses(oneIn: 20)
                if !lost { simulation.record("device \(device) is pushed") }
                return lost
            }
        }
    }
}

/// A request or an answer the network lost.
struct LostRequest: Error {}
