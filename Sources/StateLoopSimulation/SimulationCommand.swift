import Foundation

/// The command line of a simulation executable: runs its scenarios over one seed or many and
/// prints each seed's digest, or its problems with the command that replays it; exits 0 when
/// no seed failed, 1 when one did, 2 for bad arguments.
///
/// ```swift
/// // Sources/myapp-simulate/main.swift
/// import StateLoopSimulation
///
/// SimulationCommand(
///     replay: "swift run -c release myapp-simulate",
///     scenarios: [SimulationScenario("checkout") { simulation, clients in await Checkout(clients: clients).run(simulation) }]
/// ).run()
/// ```
///
/// Its arguments:
///
/// - `--seed N`: one seed, with its digest; `--seeds N`: seeds 1 to N, with a summary and every
///   failure.
/// - `--scenario NAME`: one scenario (all of them by default).
/// - `--clients N`: how many clients each scenario runs (3 by default).
/// - `--trace`: with `--seed`, everything the scenario records, with its step and simulated time.
/// - `--jobs N`: how many processes share the seeds of `--seeds` (one per processor by
///   default): each runs this executable again on every Nth seed. A seed takes the same steps
///   whichever process runs it, so its replay line holds.
///
/// A seed fails when its scenario returns problems, or when the run stalled, left jobs or
/// sleepers running, or took in jobs from outside the simulation (which its seed does not
/// decide, so that its replay may differ).
public struct SimulationCommand: Sendable {
    /// The command that runs this executable, for the replay line of a failure (the build's
    /// configuration is the replay's too: a seed replays in the build it ran in).
    public var replay: String
    /// The scenarios, in the order they run.
    public var scenarios: [SimulationScenario]

    /// A command running `scenarios`, whose failures say to replay them with `replay`.
    public init(replay: String, scenarios: [SimulationScenario]) {
        self.replay = replay
        self.scenarios = scenarios
    }

    /// Runs what `arguments` ask for (the process's own, by default) and exits.
    public func run(arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> Never {
        Simulation.prepareProcess()
        let options: Options
        do {
            options = try Options(arguments, scenarios: scenarios.map(\.name))
        } catch {
            FileHandle.standardError.write(Data("\(error.message)\nusage: \(usage)\n".utf8))
            exit(2)
        }
        let started = ContinuousClock.now
        let seeds = options.seed.map { [$0] } ?? Array(1...options.seeds)
        if let worker = options.worker {
            // One share of a parent's seeds: its failures, then how many, for the parent.
            let failures = runSeeds(seeds.filter { ($0 - 1) % UInt64(worker.of) == UInt64(worker.index) }, options: options)
            print("\(Self.failedMarker)\(failures)")
            exit(0)
        }
        let jobs = options.seed == nil ? min(options.jobs ?? ProcessInfo.processInfo.activeProcessorCount, seeds.count) : 1
        let failures = jobs > 1 ? runInWorkers(jobs, arguments: arguments) : runSeeds(seeds, options: options)
        guard let failures else { exit(1) }
        print("\(seeds.count) seeds, \(failures) failed, in \(ContinuousClock.now - started)")
        exit(failures == 0 ? 0 : 1)
    }

    /// Runs every scenario asked for over `seeds` in this process, printing each failure (and
    /// each seed's line when there is one seed); returns how many failed.
    private func runSeeds(_ seeds: [UInt64], options: Options) -> Int {
        var failures = 0
        for seed in seeds {
            for scenario in scenarios where options.scenario == nil || options.scenario == scenario.name {
                let clients = options.clients
                let trace: (@Sendable (Int, Duration, String) -> Void)? = options.traces ? Self.printTrace : nil
                let outcome = Simulation.run(seed: seed, trace: trace) { simulation in await scenario.run(simulation, clients) }
                var problems = outcome.result ?? ["stalled after \(outcome.steps) steps at \(outcome.elapsed) of simulated time"]
                if outcome.escapes > 0 { problems.append("\(outcome.escapes) jobs came from outside the simulation") }
                if outcome.leftover > 0 { problems.append("\(outcome.leftover) jobs or sleepers left running when the scenario returned") }
                if options.seed != nil || !problems.isEmpty {
                    print(
                        "seed \(seed) \(scenario.name): digest \(String(outcome.digest, radix: 16)), \(outcome.steps) steps, \(outcome.elapsed) simulated"
                    )
                }
                if !problems.isEmpty {
                    failures += 1
                    for problem in problems { print("  \(problem)") }
                    print("  replay: \(replayCommand) --seed \(seed) --scenario \(scenario.name) --clients \(clients)")
                }
            }
        }
        return failures
    }

    /// Runs `jobs` copies of this executable, each on its share of the seeds, and prints their
    /// failures in the order of their seeds; returns how many failed, or `nil` (said why) when
    /// a copy did not finish.
    private func runInWorkers(_ jobs: Int, arguments: [String]) -> Int? {
        let workers = (0..<jobs).map { index in
            Worker(arguments: Self.withoutJobs(arguments) + ["--worker", "\(index)/\(jobs)"])
        }
        var failures = 0
        var blocks: [(seed: UInt64, lines: [Substring])] = []
        for worker in workers {
            let (status, output) = worker.finish()
            var counted: Int?
            for line in output.split(separator: "\n") {
                if line.hasPrefix(Self.failedMarker) {
                    counted = Int(line.dropFirst(Self.failedMarker.count))
                } else if line.hasPrefix("seed "), let seed = UInt64(line.split(separator: " ")[1]) {
                    blocks.append((seed, [line]))
                } else if !blocks.isEmpty {
                    blocks[blocks.count - 1].lines.append(line)
                } else {
                    print(line)
                }
            }
            guard status == 0, let counted else {
                FileHandle.standardError.write(Data("a worker process ended with status \(status) before its seeds were done\n".utf8))
                return nil
            }
            failures += counted
        }
        for block in blocks.sorted(by: { $0.seed < $1.seed }) {
            for line in block.lines { print(line) }
        }
        return failures
    }

    /// `arguments` without `--jobs` and its number.
    private static func withoutJobs(_ arguments: [String]) -> [String] {
        var kept: [String] = []
        var arguments = arguments.makeIterator()
        while let argument = arguments.next() {
            if argument == "--jobs" { _ = arguments.next() } else { kept.append(argument) }
        }
        return kept
    }

    /// How a worker's last line starts: its count of failed seeds follows.
    private static let failedMarker = "worker failed: "

    /// ``replay`` with the build's configuration: debug and release builds take different steps.
    private var replayCommand: String {
        #if DEBUG
            replay
        #else
            replay.hasPrefix("swift run ") && !replay.contains(" -c release")
                ? "swift run -c release " + replay.dropFirst("swift run ".count) : replay
        #endif
    }

    private var usage: String {
        let names = scenarios.map(\.name).joined(separator: "|")
        return "\(replay.split(separator: " ").last ?? "simulate") [--seed N | --seeds N] [--scenario \(names)] [--clients N] [--trace] [--jobs N]"
    }

    /// Prints one event a traced seed recorded, after its step and simulated time.
    @Sendable private static func printTrace(_ step: Int, _ time: Duration, _ event: String) {
        FileHandle.standardError.write(Data("[step \(step), \(time)] \(event)\n".utf8))
    }

    /// What the arguments ask for.
    struct Options {
        var seed: UInt64?
        var seeds: UInt64 = 1
        var clients = 3
        var scenario: String?
        var traces = false
        /// How many processes share the seeds; `nil`: one per processor.
        var jobs: Int?
        /// Set in a worker process: it runs the seeds whose number less one leaves `index`
        /// when divided by `of`.
        var worker: (index: Int, of: Int)?

        /// Reads `arguments`, whose `--scenario` must be one of `scenarios`.
        init(_ arguments: [String], scenarios: [String]) throws(Refusal) {
            var arguments = arguments.makeIterator()
            func number<N: FixedWidthInteger>(after option: String) throws(Refusal) -> N {
                guard let text = arguments.next(), let value = N(text), value > 0 else { throw Refusal("\(option) takes a whole number above 0") }
                return value
            }
            while let argument = arguments.next() {
                switch argument {
                case "--seed": seed = try number(after: argument)
                case "--seeds": seeds = try number(after: argument)
                case "--clients": clients = try number(after: argument)
                case "--scenario": scenario = arguments.next()
                case "--trace": traces = true
                case "--jobs": jobs = try number(after: argument)
                case "--worker":
                    let parts = arguments.next()?.split(separator: "/").compactMap { Int($0) } ?? []
                    guard parts.count == 2, parts[1] > 0, (0..<parts[1]).contains(parts[0]) else { throw Refusal("--worker takes INDEX/COUNT") }
                    worker = (parts[0], parts[1])
                default: throw Refusal("unknown argument \(argument)")
                }
            }
            if traces, seed == nil { throw Refusal("--trace follows one seed: give it with --seed N") }
            if let scenario, !scenarios.contains(scenario) {
                throw Refusal("no scenario \(scenario): the scenarios are \(scenarios.joined(separator: ", "))")
            }
        }
    }

    /// Arguments the command cannot run, and why.
    struct Refusal: Error {
        let message: String

        init(_ message: String) {
            self.message = message
        }
    }
}

/// One scenario of a ``SimulationCommand``: its name, and what it runs for one seed.
public struct SimulationScenario: Sendable {
    /// The name `--scenario` picks it by.
    public var name: String
    /// Runs the scenario with a number of clients; returns what went wrong, nothing when all
    /// held.
    public var run: @Sendable (_ simulation: Simulation, _ clients: Int) async -> [String]

    /// A scenario named `name`.
    public init(_ name: String, run: @escaping @Sendable (_ simulation: Simulation, _ clients: Int) async -> [String]) {
        self.name = name
        self.run = run
    }
}

/// A copy of the running executable with other arguments, its output read as it comes (a
/// pipe left full would stop it).
private final class Worker: @unchecked Sendable {
    private let process = Process()
    private let output = Pipe()
    private let lock = NSLock()
    private var gathered = Data()
    private let done = DispatchSemaphore(value: 0)

    init(arguments: [String]) {
        #if os(Linux)
            process.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        #else
            process.executableURL = Bundle.main.executableURL
        #endif
        process.arguments = arguments
        process.standardOutput = output
        let reading = output.fileHandleForReading
        Thread.detachNewThread { [self] in
            let data = reading.readDataToEndOfFile()
            lock.withLock { gathered = data }
            done.signal()
        }
        do {
            try process.run()
        } catch {
            FileHandle.standardError.write(Data("a worker process could not start: \(error)\n".utf8))
            try? output.fileHandleForWriting.close()
        }
    }

    /// Waits for the copy's end: its exit status (-1 if it never started) and what it printed.
    func finish() -> (status: Int32, output: String) {
        try? output.fileHandleForWriting.close()
        done.wait()
        let started = process.processIdentifier != 0
        if started { process.waitUntilExit() }
        return (started ? process.terminationStatus : -1, lock.withLock { String(decoding: gathered, as: UTF8.self) })
    }
}
