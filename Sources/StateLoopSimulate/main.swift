import Foundation
import StateLoopSimulation

// stateloop-simulate: runs simulated scenarios, one seed or many, and prints each seed's
// digest, or its problems with the command that replays it.
//
//   stateloop-simulate --seed 42            one seed: its digest, for each scenario
//   stateloop-simulate --seeds 1000         seeds 1 to 1000: a summary, and every failure
//   --scenario resources|mutations|kit      one scenario (all, by default)
//   --clients N                             how many clients (3)
//   --trace                                 with --seed: print what the scenario records, with its step and simulated time

Simulation.prepareProcess()

var seed: UInt64?
var seeds: UInt64 = 1
var clients = 3
var only: String?
var traces = false
let scenarios = ["resources", "mutations", "kit"]
var arguments = CommandLine.arguments.dropFirst().makeIterator()
/// Stops with `message` and the usage, as a command line tool does for bad input.
func refuse(_ message: String) -> Never {
    FileHandle.standardError.write(
        Data("\(message)\nusage: stateloop-simulate [--seed N | --seeds N] [--scenario resources|mutations|kit] [--clients N] [--trace]\n".utf8))
    exit(2)
}
/// Prints one event a traced seed recorded, after its step and simulated time.
@Sendable func printTrace(_ step: Int, _ time: Duration, _ event: String) {
    FileHandle.standardError.write(Data("[step \(step), \(time)] \(event)\n".utf8))
}
/// The number after `option`, above 0.
@MainActor func number<N: FixedWidthInteger>(after option: String) -> N {
    guard let text = arguments.next(), let value = N(text), value > 0 else { refuse("\(option) takes a whole number above 0") }
    return value
}
while let argument = arguments.next() {
    switch argument {
    case "--seed": seed = number(after: argument)
    case "--seeds": seeds = number(after: argument)
    case "--clients": clients = number(after: argument)
    case "--scenario": only = arguments.next()
    case "--trace": traces = true
    default: refuse("unknown argument \(argument)")
    }
}
if traces, seed == nil { refuse("--trace follows one seed: give it with --seed N") }
if let only, !scenarios.contains(only) {
    refuse("no scenario \(only): the scenarios are \(scenarios.joined(separator: ", "))")
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
        let trace: (@Sendable (Int, Duration, String) -> Void)? = traces ? printTrace : nil
        let outcome = Simulation.run(seed: seed, trace: trace) { simulation in
            switch name {
            case "resources": await ResourcesScenario(clients: count).run(simulation)
            case "mutations": await MutationsScenario(clients: count).run(simulation)
            default: await MutationsScenario(clients: count, kit: true).run(simulation)
            }
        }
        var problems = outcome.result ?? ["stalled after \(outcome.steps) steps at \(outcome.elapsed) of simulated time"]
        if outcome.escapes > 0 { problems.append("\(outcome.escapes) jobs came from outside the simulation") }
        if outcome.leftover > 0 { problems.append("\(outcome.leftover) jobs or sleepers left running when the scenario returned") }
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
