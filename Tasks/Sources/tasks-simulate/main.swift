import StateLoopSimulation

// tasks-simulate: Tasks' server and devices in one deterministic simulation
// (SimulationCommand: --seed N | --seeds N, --scenario boards, --clients N, --trace, --jobs N).
SimulationCommand(
    replay: "swift run --package-path Tasks tasks-simulate",
    scenarios: [SimulationScenario("boards") { simulation, clients in await BoardsScenario(users: clients).run(simulation) }]
).run()
