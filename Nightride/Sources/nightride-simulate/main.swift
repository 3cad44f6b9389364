import StateLoopSimulation

// nightride-simulate: Nightride's server and clients in one deterministic simulation
// (SimulationCommand: --seed N | --seeds N, --scenario rides, --clients N, --trace).
SimulationCommand(
    replay: "swift run --package-path Nightride nightride-simulate",
    scenarios: [SimulationScenario("rides") { simulation, clients in await RidesScenario(clients: clients).run(simulation) }]
).run()
