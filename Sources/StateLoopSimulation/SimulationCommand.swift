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
        let range = options.seed.map { $0...$0 } ?? 1...options.seeds
        var failures = 0
        let started = ContinuousClock.now
        for seed in range {
            for scenario in scenarios where options.scenario == nil || options.scenario == scenario.name {
                let clients = options.clients
                let trace: (@Sendable (Int, Duration, String) -> Void)? = options.traces ? Self.printTrace : nil
                let outcome = Simulation.run(seed: seed, trace: trace) { simulation in await scenario.run(simulation, clients) }
                var problems = outcome.result ?? ["stalled after \(outcome.steps) steps at \(outcome.elapsed) of simulated time"]
                if outcome.escapes > 0 { problems.append("\(outcome.escapes) jobs came from outside the simulation") }
                if outcome.leftover > 0 { problems.append("\(outcome.leftover) jobs or sleepers left running when the scenario returned") }
                if range.count == 1 || !problems.isEmpty {
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
        print("\(range.count) seeds, \(failures) failed, in \(ContinuousClock.now - started)")
        exit(failures == 0 ? 0 : 1)
    }

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
        return "\(replay.split(separator: " ").last ?? "simulate") [--seed N | --seeds N] [--scenario \(names)] [--clients N] [--trace]"
    }

    /// Prints one event a traced seed recorded, after its step and simulated time.
    @Sendable private static func printTrace(_ step: Int, _ time: Duration, _ event: String) {
        FileHandle.standardError.write(Data("[step \(step), \(time)] \(event)\n".utf8))
    }

    /// What the arguments ask for.
    struct Options: Equatable {
        var seed: UInt64?
        var seeds: UInt64 = 1
        var clients = 3
        var scenario: String?
        var traces = false

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
