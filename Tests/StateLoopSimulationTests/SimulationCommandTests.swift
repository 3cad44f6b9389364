import Testing

@testable import StateLoopSimulation

/// `SimulationCommand`'s arguments: what a simulation executable runs, and the refusals that
/// say how to ask instead.
@Suite struct SimulationCommandTests {
    private let scenarios = ["rides", "kit"]

    @Test func argumentsChooseTheRun() throws {
        let defaults = try SimulationCommand.Options([], scenarios: scenarios)
        #expect(defaults.seed == nil && defaults.seeds == 1 && defaults.clients == 3 && defaults.scenario == nil && !defaults.traces)
        let one = try SimulationCommand.Options(["--seed", "42", "--scenario", "kit", "--clients", "5", "--trace"], scenarios: scenarios)
        #expect(one.seed == 42 && one.scenario == "kit" && one.clients == 5 && one.traces)
        #expect(try SimulationCommand.Options(["--seeds", "1000"], scenarios: scenarios).seeds == 1000)
        #expect(defaults.jobs == nil && defaults.worker == nil)
        let shared = try SimulationCommand.Options(["--seeds", "10", "--jobs", "4"], scenarios: scenarios)
        #expect(shared.jobs == 4)
        let worker = try SimulationCommand.Options(["--seeds", "10", "--worker", "1/4"], scenarios: scenarios)
        #expect(worker.worker?.index == 1 && worker.worker?.of == 4)
    }

    @Test func badArgumentsAreRefusedWithTheReason() {
        let refusals: [([String], String)] = [
            (["--seeds", "0"], "--seeds takes a whole number above 0"),
            (["--seed"], "--seed takes a whole number above 0"),
            (["--clients", "three"], "--clients takes a whole number above 0"),
            (["--seeds", "3", "--trace"], "--trace follows one seed: give it with --seed N"),
            (["--scenario", "nope"], "no scenario nope: the scenarios are rides, kit"),
            (["--fast"], "unknown argument --fast"),
            (["--jobs", "0"], "--jobs takes a whole number above 0"),
            (["--worker", "4/4"], "--worker takes INDEX/COUNT"),
        ]
        for (arguments, message) in refusals {
            #expect(throws: SimulationCommand.Refusal.self, "\(arguments)") { try SimulationCommand.Options(arguments, scenarios: scenarios) }
            do {
                _ = try SimulationCommand.Options(arguments, scenarios: scenarios)
            } catch {
                #expect(error.message == message)
            }
        }
    }
}
