import Foundation
import StateLoopSimulation

// stateloop-simulate: runs simulated scenarios, one seed or many, and prints each seed's
// digest, or its problems with the command that replays it.
//
//   stateloop-simulate --seed 42            one seed: its digest, for each scenario
//   stateloop-simulate --seeds 1000         seeds 1 to 1000: a summary, and every failure
//   --scenario resources|mutations          one scenario (both, by default)
//   --clients N                             how many clients (3)

Simulation.prepareProcess()

var seed: UInt64?
var seeds: UInt64 = 1
var clients = 3
var only: String?
let scenarios = ["resources", "mutations"]
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--seed": seed = arguments.next().flatMap(UInt64.init)
    case "--seeds": seeds = arguments.next().flatMap(UInt64.init) ?? 0
    case "--clients": clients = arguments.next().flatMap(Int.init) ?? 0
    case "--scenario": only = arguments.next()
    default:
        FileHandle.standardError.write(Data("unknown argument \(argument): use --seed N, --seeds N, --scenario NAME, --clients N\n".utf8))
        exit(2)
    }
}
guard seeds > 0, clients > 0 else {
    FileHandle.standardError.write(Data("--seeds and --clients take a number above 0\n".utf8))
    exit(2)
}
if let only, !scenarios.contains(only) {
    FileHandle.standardError.write(Data("no scenario \(only): the scenarios are \(scenarios.joined(separator: ", "))\n".utf8))
    exit(2)
}
// A seed replays in the build it ran in: debug and release builds take different steps.
#if DEBUG
    let configuration = ""
#else
    let configuration = " -c release"
#endif
let range = seed.map { $0...$0 } ?? 1...seeds
var failures = 0
let started = ContinuousClock.now
for seed in range {
    for name in scenarios where only == nil || only == name {
        // Copied: the scenario reads no global of this file, which the main actor would guard
        // (a hop to it leaves the simulation).
        let count = clients
        let outcome = Simulation.run(seed: seed) { simulation in
            name == "resources"
                ? await ResourcesScenario(clients: count).run(simulation) : await MutationsScenario(clients: count).run(simulation)
        }
        var problems = outcome.result ?? ["stalled after \(outcome.steps) steps at \(outcome.elapsed) of simulated time"]
        if outcome.escapes > 0 { problems.append("\(outcome.escapes) jobs came from outside the simulation") }
        if range.count == 1 || !problems.isEmpty {
            print("seed \(seed) \(name): digest \(String(outcome.digest, radix: 16)), \(outcome.steps) steps, \(outcome.elapsed) simulated")
        }
        if !problems.isEmpty {
            failures += 1
            for problem in problems { print("  \(problem)") }
            print("  replay: swift run\(configuration) stateloop-simulate --seed \(seed) --scenario \(name) --clients \(clients)")
        }
    }
}
let elapsed = ContinuousClock.now - started
print("\(range.count) seeds, \(failures) failed, in \(elapsed)")
exit(failures == 0 ? 0 : 1)
