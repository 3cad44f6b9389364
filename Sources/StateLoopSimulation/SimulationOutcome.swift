/// How a ``Simulation/run(seed:patience:trace:_:)`` ended.
public struct SimulationOutcome<Result: Sendable>: Sendable {
    /// What the scenario returned; `nil` when it never returned (``stalled``).
    public let result: Result?
    /// A digest of every step taken, every instant time moved to and every
    /// ``Simulation/record(_:)``, in order: equal for two runs of a seed that went the same way.
    public let digest: UInt64
    /// How many jobs ran.
    public let steps: Int
    /// How many jobs came from a thread outside the simulation (work that left Swift's
    /// concurrency): each is a moment the seed did not decide. A deterministic scenario has none.
    public let escapes: Int
    /// How many jobs and sleepers the scenario left when it returned: work it started and did
    /// not stop, which would run into the next run of the process. A clean scenario leaves none.
    public let leftover: Int
    /// Whether the run ended with the scenario waiting for something that never came: nothing
    /// ready, no sleeper, and no work from outside within the patience.
    public let stalled: Bool
    /// The simulated time that passed.
    public let elapsed: Duration
}
