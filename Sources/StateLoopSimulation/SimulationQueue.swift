/// What a simulation runs next, worked out apart from any thread or runtime hook: the jobs
/// ready to run, the sleepers waiting for a simulated instant, and the seeded choice between
/// ready jobs. ``Simulation`` is its host: it feeds it what the Swift runtime enqueues and runs
/// what it picks.
///
/// Why a choice at all: jobs that are ready together could run in any order on a real machine,
/// and the bugs worth finding hide in the orders a real machine rarely takes. The seed decides
/// every such order, so a seed is a whole interleaving, replayed exactly.
struct SimulationQueue<Job> {
    /// One sleeper: what to resume once simulated time reaches `instant`.
    private struct Sleeper {
        var instant: Duration
        /// The order it began to sleep in: sleepers due at the same instant wake in that order.
        var order: UInt64
        var wake: Job
    }

    /// What ``next(_:)`` decided.
    enum Step {
        /// Run this job now: the `choice`th of the `of` ready ones.
        case run(Job, choice: Int, of: Int)
        /// Simulated time moved to `instant`; run this sleeper's job.
        case wake(Job, at: Duration)
        /// Nothing is ready and nobody sleeps.
        case idle
    }

    private var ready: [Job] = []
    private var sleepers: [Sleeper] = []
    private var slept: UInt64 = 0
    /// The simulated time since the simulation started.
    private(set) var now: Duration = .zero

    /// Whether a job is ready or a sleeper waits.
    var isEmpty: Bool { ready.isEmpty && sleepers.isEmpty }

    /// How many jobs are ready and sleepers wait: what a run leaves when its scenario returns.
    var count: Int { ready.count + sleepers.count }

    /// A job that can run now.
    mutating func enqueue(_ job: Job) {
        ready.append(job)
    }

    /// A job to run once simulated time reaches `instant` (now, if that is past); returns the
    /// sleeper's number, for ``wakeEarly(_:)``.
    @discardableResult
    mutating func enqueue(_ job: Job, at instant: Duration) -> UInt64 {
        slept += 1
        sleepers.append(Sleeper(instant: max(instant, now), order: slept, wake: job))
        return slept
    }

    /// Makes the sleeper `number` ready now (its task was cancelled); `false` if it already woke.
    mutating func wakeEarly(_ number: UInt64) -> Bool {
        guard let index = sleepers.firstIndex(where: { $0.order == number }) else { return false }
        ready.append(sleepers.remove(at: index).wake)
        return true
    }

    /// One of the ready jobs, picked by `random`, or ``Step/idle``: time does not move.
    mutating func nextReady(_ random: inout some RandomNumberGenerator) -> Step {
        guard !ready.isEmpty else { return .idle }
        let count = ready.count
        let choice = Int.random(in: 0..<count, using: &random)
        return .run(ready.remove(at: choice), choice: choice, of: count)
    }

    /// The next job: one of the ready ones, picked by `random`; with none ready, the earliest
    /// sleeper, simulated time moving to its instant. Time never moves while a job is ready.
    mutating func next(_ random: inout some RandomNumberGenerator) -> Step {
        if !ready.isEmpty { return nextReady(&random) }
        guard
            let earliest = sleepers.indices.min(by: {
                (sleepers[$0].instant, sleepers[$0].order) < (sleepers[$1].instant, sleepers[$1].order)
            })
        else { return .idle }
        let sleeper = sleepers.remove(at: earliest)
        now = sleeper.instant
        return .wake(sleeper.wake, at: now)
    }
}
