import StateLoopSimulation

// stateloop-simulate: the library's scenarios (SimulationCommand: --seed N | --seeds N,
// --scenario resources|mutations|kit, --clients N, --trace).
SimulationCommand(
    replay: "swift run stateloop-simulate",
    scenarios: [
        SimulationScenario("resources") { simulation, clients in await ResourcesScenario(clients: clients).run(simulation) },
        SimulationScenario("mutations") { simulation, clients in await MutationsScenario(clients: clients).run(simulation) },
        SimulationScenario("kit") { simulation, clients in await MutationsScenario(clients: clients, kit: true).run(simulation) },
    ]
).run()
