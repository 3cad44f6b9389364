import StateLoopSimulation

/// The sample of `Sources/StateLoopSimulation/StateLoopSimulation.docc/StateLoopSimulation.md`:
/// compiled, never run (a simulation takes the whole process's hooks, and the tests share it).
enum SimulationCatalogSample {
    /// A scenario: what went wrong, described.
    static func myScenario(_ simulation: Simulation, clock: SimulationClock) async -> [String] {
        try? await clock.sleep(for: .seconds(1))
        return []
    }

    static func sample() {
        // Sources/StateLoopSimulation/StateLoopSimulation.docc/StateLoopSimulation.md:
        Simulation.prepareProcess()  // first thing in main: deterministic hashing
        for seed: UInt64 in 1...10_000 {
            let outcome = Simulation.run(seed: seed) { simulation in
                await myScenario(simulation, clock: SimulationClock())
            }
            if outcome.result != [] { print("seed \(seed) failed: replay it with --seed \(seed)") }
        }
        // End of the example.
    }
}
