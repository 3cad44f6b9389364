import StateLoopSimulation
import StateLoopSyncTransports

extension LossyTransport {
    /// How often a simulated network loses each leg: one in so many, `nil` for never.
    public struct Odds: Sendable, Hashable {
        /// One request in `request` never reaches the server.
        public var request: Int?
        /// One answer in `answer` never comes back (the server acted on its request).
        public var answer: Int?
        /// One push socket's opening in `opening` reaches no server.
        public var opening: Int?
        /// One push message in `message` is lost, and its socket cut.
        public var message: Int?

        /// Odds of losing; by default one request in 10, one answer in 8, one push message in 20,
        /// and no opening.
        public init(request: Int? = 10, answer: Int? = 8, opening: Int? = nil, message: Int? = 20) {
            self.request = request
            self.answer = answer
            self.opening = opening
            self.message = message
        }
    }

    /// The network between one app and its server in a simulation, every choice drawn from
    /// its seed: each trip takes 10 to 310 ms; until `calm` (simulated time since the
    /// simulation began) each leg is lost at `odds`, and everything during `outage`; from `calm`
    /// on, nothing is lost. Each request is recorded (`Simulation.record(_:)`) as
    /// `"<name>: <method> <path>"`, and each push socket's opening as `"<name>: opens push
    /// <path>"`, so that a seed's trace shows what each app sent.
    ///
    /// ```swift
    /// let network = LossyTransport(simulating: simulation, over: server, clock: clock, name: "ann",
    ///                              calm: .seconds(90), outage: .seconds(20)..<.seconds(35))
    /// ```
    public init(
        simulating simulation: Simulation, over transport: any SyncTransport, clock: SimulationClock, name: String, calm: Duration,
        outage: Range<Duration>, odds: Odds = Odds()
    ) {
        self.init(over: transport, clock: clock, latency: { .milliseconds(10 + simulation.random(in: 0..<300)) }) { leg, request in
            let now = clock.now.offset
            if leg == .request { simulation.record("\(name): \(request.method) \(request.url.path)") }
            if leg == .opening { simulation.record("\(name): opens push \(request.url.path)") }
            guard now < calm else { return false }
            if outage.contains(now) { return true }
            let oneIn: Int? =
                switch leg {
                case .request: odds.request
                case .answer: odds.answer
                case .opening: odds.opening
                case .message: odds.message
                }
            return oneIn.map { simulation.random(in: 0..<$0) == 0 } ?? false
        }
    }
}
