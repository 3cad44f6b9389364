import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs async code deterministically: every job the Swift runtime would hand its thread pool
/// runs on the calling thread instead, in an order drawn from a seed, and time is simulated
/// (``SimulationClock``): it moves only when nothing is ready, straight to the next sleeper. The
/// same seed runs the same steps in the same order, so that a failure found among thousands of
/// seeds replays exactly, and hours of timeouts and backoffs pass in microseconds.
///
/// ```swift
/// let outcome = Simulation.run(seed: 42) { simulation in
///     let clock = SimulationClock()
///     try? await clock.sleep(for: .seconds(30))
///     simulation.record("woke at \(clock.now)")
/// }
/// print(outcome.digest)  // the same for seed 42, every run
/// ```
///
/// How: the runtime's global-enqueue and main-executor hooks, which belong to the whole
/// process. A simulation therefore runs in a process of its own (an executable, or a child
/// process of a test), one at a time, and that process hashes deterministically
/// (``prepareProcess()``). Work that leaves Swift's concurrency (a `DispatchQueue`,
/// SwiftNIO, GRDB's asynchronous calls, `Task.sleep` on a real clock) escapes the seed: it comes
/// back from another thread, at a moment the seed does not decide. The simulation counts each
/// such job (``SimulationOutcome/escapes``), and a determinism check should require none. The
/// main actor is not simulated on Swift 6.3, whose main executor enqueues past the hook: a
/// scenario that hops to it (reading a global of an executable's `main.swift`, say) waits for
/// a job that never comes, and its run is ``SimulationOutcome/stalled``.
public final class Simulation: @unchecked Sendable {
    /// One thing the simulation can run: a job of the runtime's, or a sleeper to resume.
    enum Work {
        case job(UnownedJob, main: Bool)
        case resume(CheckedContinuation<Void, Never>)
    }

    /// The simulation that owns the hooks now; read by the hooks on any thread.
    nonisolated(unsafe) private static var running: Simulation?
    private static let runningLock = NSLock()

    /// Guards `queue`, `random`, `digest` and `escapes`: the hooks may be called from a thread
    /// that escaped the simulation.
    private let condition = NSCondition()
    private var queue = SimulationQueue<Work>()
    private var random: SimulationRandom
    private var digest = Digest()
    private var escapes = 0
    private var steps = 0
    private let driver: Thread
    /// Told each ``record(_:)`` with the simulated time it came at.
    private let trace: (@Sendable (_ step: Int, _ time: Duration, _ event: String) -> Void)?

    private init(seed: UInt64, trace: (@Sendable (_ step: Int, _ time: Duration, _ event: String) -> Void)?) {
        random = SimulationRandom(seed: seed)
        driver = Thread.current
        self.trace = trace
    }

    /// The simulation running on this process, if any: what ``SimulationClock`` sleeps on.
    static var current: Simulation? {
        runningLock.withLock { running }
    }

    /// Runs `body` and everything it starts until `body` returns, on the calling thread, with
    /// every choice drawn from `seed`. Work `body` leaves running after it returns is run on
    /// until none is ready, without moving time; what is still asleep then is counted
    /// (``SimulationOutcome/leftover``) and never resumed: a scenario stops what it started.
    ///
    /// - Parameters:
    ///   - seed: Decides the order of every pair of jobs ready together, and what ``random(in:)`` draws.
    ///   - patience: How long, in real time, to wait for work that escaped the simulation when
    ///     nothing is ready, no sleeper waits and `body` has not returned. Past it, the run is
    ///     ``SimulationOutcome/stalled``.
    ///   - trace: Told every ``record(_:)`` with the step and the simulated time it came at,
    ///     to follow a failing seed's replay; it changes nothing in the run. A seed's trace is
    ///     the same, byte for byte, each time it runs in the same build.
    ///   - body: The scenario. It gets the simulation, to ``record(_:)`` what it saw.
    public static func run<Result: Sendable>(
        seed: UInt64, patience: Duration = .seconds(2), trace: (@Sendable (_ step: Int, _ time: Duration, _ event: String) -> Void)? = nil,
        _ body: @escaping @Sendable (Simulation) async -> Result
    ) -> SimulationOutcome<Result> {
        precondition(
            hashingIsDeterministic,
            "Simulation.run needs Swift's hashing made deterministic (dictionaries and sets iterate in an order seeded per process): call Simulation.prepareProcess() first thing in main, or set SWIFT_DETERMINISTIC_HASHING=1"
        )
        let simulation = Simulation(seed: seed, trace: trace)
        runningLock.withLock {
            precondition(running == nil, "one Simulation.run at a time per process: the runtime's hooks are the process's")
            running = simulation
        }
        SimulationHooks.install()
        defer { runningLock.withLock { running = nil } }
        let result = Locked<Result?>(nil)
        // Detached: enqueued through the global hook, into this simulation's queue.
        Task.detached { result.set(await body(simulation)) }
        var stalled = false
        while result.get() == nil {
            guard simulation.step(movingTime: true, patience: patience) else {
                stalled = true
                break
            }
        }
        // What the scenario left ready runs out; sleepers stay asleep.
        while simulation.step(movingTime: false, patience: nil) {}
        return simulation.condition.withLock {
            SimulationOutcome(
                result: result.get(), digest: simulation.digest.value, steps: simulation.steps, escapes: simulation.escapes,
                leftover: simulation.queue.count, stalled: stalled, elapsed: simulation.queue.now)
        }
    }

    /// Makes this process fit to run simulations, called first thing in its `main`: unless
    /// Swift's hashing is deterministic already, the process starts again (`execv`, same
    /// arguments) with `SWIFT_DETERMINISTIC_HASHING=1`. Without it, every dictionary and set
    /// iterates in an order seeded anew by each process, and a seed replayed in another process
    /// takes other steps.
    public static func prepareProcess() {
        guard !hashingIsDeterministic else { return }
        setenv("SWIFT_DETERMINISTIC_HASHING", "1", 1)
        #if os(Linux)
            let executable = "/proc/self/exe"
        #else
            let executable = Bundle.main.executablePath ?? CommandLine.arguments[0]
        #endif
        execv(executable, CommandLine.unsafeArgv)
        fatalError("Simulation.prepareProcess: the process could not start again (execv: errno \(errno)); set SWIFT_DETERMINISTIC_HASHING=1 yourself")
    }

    /// Whether the process hashes with a fixed seed (`SWIFT_DETERMINISTIC_HASHING`).
    private static var hashingIsDeterministic: Bool {
        // The values the runtime reads as "on"; anything else leaves hashing seeded.
        ["1", "true", "yes", "on"].contains(ProcessInfo.processInfo.environment["SWIFT_DETERMINISTIC_HASHING"]?.lowercased() ?? "")
    }

    /// Runs one piece of work; `false` when there was none (after waiting up to `patience` for
    /// work from outside, when given).
    private func step(movingTime: Bool, patience: Duration?) -> Bool {
        condition.lock()
        var next = movingTime ? queue.next(&random) : queue.nextReady(&random)
        if case .idle = next, let patience {
            let deadline = Date(timeIntervalSinceNow: Double(patience.components.seconds) + Double(patience.components.attoseconds) / 1e18)
            while case .idle = next, condition.wait(until: deadline) {
                next = queue.next(&random)
            }
        }
        switch next {
        case .idle:
            condition.unlock()
            return false
        case .run(let work, let choice, let count):
            steps += 1
            digest.mix(1)
            digest.mix(UInt64(choice))
            digest.mix(UInt64(count))
            condition.unlock()
            run(work)
        case .wake(let work, let instant):
            steps += 1
            digest.mix(2)
            digest.mix(UInt64(instant.components.seconds))
            digest.mix(UInt64(instant.components.attoseconds))
            condition.unlock()
            run(work)
        }
        return true
    }

    private func run(_ work: Work) {
        switch work {
        case .job(let job, let main):
            job.runSynchronously(on: main ? MainActor.sharedUnownedExecutor : SimulationExecutor.shared.asUnownedSerialExecutor())
        case .resume(let continuation):
            continuation.resume()
        }
    }

    /// Takes a job the runtime enqueued while this simulation runs.
    func enqueue(_ job: UnownedJob, main: Bool) {
        condition.withLock {
            if Thread.current != driver { escapes += 1 }
            queue.enqueue(.job(job, main: main))
            condition.signal()
        }
    }

    /// Registers a sleeper until `instant` of simulated time; returns its number, for
    /// ``wakeEarly(_:)``.
    func sleep(until instant: Duration, _ continuation: CheckedContinuation<Void, Never>) -> UInt64 {
        condition.withLock { queue.enqueue(.resume(continuation), at: instant) }
    }

    /// Wakes the sleeper `number` now: its task was cancelled.
    func wakeEarly(_ number: UInt64) {
        condition.withLock { _ = queue.wakeEarly(number) }
    }

    /// How many steps the simulation has taken: where a scenario is in its run, the same at the
    /// same point of each replay of its seed (in the same build).
    public var step: Int {
        condition.withLock { steps }
    }

    /// The simulated time since the simulation started.
    public var now: Duration {
        condition.withLock { queue.now }
    }

    /// Mixes `event` into the run's digest: what the scenario saw, so that two runs of a seed
    /// that saw different things have different digests.
    public func record(_ event: String) {
        let (step, now) = condition.withLock {
            for byte in event.utf8 { digest.mix(UInt64(byte)) }
            digest.mix(0xFF)
            return (steps, queue.now)
        }
        trace?(step, now, event)
    }

    /// A number drawn from the simulation's seed, for the scenario's own choices (which client
    /// acts, whether a message is lost).
    public func random(in range: Range<Int>) -> Int {
        condition.withLock { Int.random(in: range, using: &random) }
    }
}

/// A value shared between the scenario's task and the loop that drives it.
private final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func get() -> Value {
        lock.withLock { value }
    }

    func set(_ newValue: Value) {
        lock.withLock { value = newValue }
    }
}

/// FNV-1a over 64-bit words: a run's steps and records, in order.
private struct Digest {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func mix(_ word: UInt64) {
        var word = word
        for _ in 0..<8 {
            value ^= word & 0xFF
            value &*= 0x0000_0100_0000_01b3
            word >>= 8
        }
    }
}
