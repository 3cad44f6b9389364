import NightrideClient
import StateLoop
import StateLoopSimulation
import StateLoopSync

/// One user's phone in the simulation: the Nightride client of its current launch, on an
/// actor of its own (the simulation does not run the main actor), and what it saw.
actor Phone {
    let number: Int
    let isDriver: Bool
    private var client: NightrideClient?
    /// The session the running launch signed in with.
    private(set) var token: String?
    /// When the user signed in to that session, on the simulated clock.
    private(set) var signedInAt = Duration.zero
    /// What the running launch was started with, for a relaunch.
    private var started: (api: NightrideAPI, options: ClientOptions, signedInAt: Duration)?
    private var watching: StateSubscription?
    /// The problems seen in the states this phone's launches showed.
    private(set) var problems: [String] = []
    private var launches = 0
    /// The id of each mutation the user's actions made, with the launch that made it.
    private var made: [(id: MutationID, launch: Int)] = []

    init(number: Int, isDriver: Bool) {
        self.number = number
        self.isDriver = isDriver
    }

    /// The user's name, and the password of its account.
    nonisolated var name: String { "rider\(number)" }

    /// Launches the app signed in as `api` at `signedInAt` (the previous launch, if any,
    /// stopped), and checks each state it shows: within a launch, neither resource's confirmed
    /// value ever goes back.
    func launch(_ api: NightrideAPI, signedInAt: Duration, options: ClientOptions, simulation: Simulation) throws {
        stop()
        launches += 1
        var options = options
        options.clientIDPrefix = "\(name)-\(launches)"
        let client = try NightrideClient(api: api, options: options)
        let label = "\(name) (launch \(launches))"
        var shown: (driverMode: Version?, ride: Version?) = (nil, nil)
        var refused: String?
        watching = client.system.observe { [weak self] state in
            simulation.record(
                "\(label) shows driver mode \(state.driverMode.value.map { "\($0)" } ?? "-") at \(state.driverMode.confirmedVersion?.counter ?? 0), "
                    + "ride \(state.ride.value?.phase.rawValue ?? "-") at \(state.ride.confirmedVersion?.counter ?? 0)")
            var seen: [String] = []
            // Only the server refuses a change, with a 4xx: one given up on a failure of the way
            // there (a lost request or answer, a deadline, a 5xx) may have been applied, and the
            // user was told it failed.
            if let refusal = state.refusal, refusal != refused {
                refused = refusal
                simulation.record("\(label) is told \(refusal)")
                if !refusal.contains("HTTP 4") {
                    seen.append("step \(simulation.step): \(label) is told a change failed that the server did not refuse: \(refusal)")
                }
            }
            if let version = state.driverMode.confirmedVersion {
                if let earlier = shown.driverMode, version < earlier {
                    seen.append("step \(simulation.step): \(label)'s driver mode went back from \(earlier) to \(version)")
                }
                shown.driverMode = max(shown.driverMode ?? version, version)
            }
            if let version = state.ride.confirmedVersion {
                if let earlier = shown.ride, version < earlier {
                    seen.append("step \(simulation.step): \(label)'s ride went back from \(earlier) to \(version)")
                }
                shown.ride = max(shown.ride ?? version, version)
            }
            if !seen.isEmpty { Task { await self?.note(seen) } }
        }
        self.client = client
        token = api.token
        self.signedInAt = signedInAt
        started = (api, options, signedInAt)
    }

    /// The app quits and is launched again with the same session, from its journal: `false`
    /// when it was not running.
    func relaunch(simulation: Simulation) throws -> Bool {
        guard let started, client != nil else { return false }
        try launch(started.api, signedInAt: started.signedInAt, options: started.options, simulation: simulation)
        return true
    }

    private func note(_ seen: [String]) {
        problems += seen
    }

    /// Does what the user asked, on the launch running now.
    func perform(_ action: UserAction) {
        if let id = client?.perform(action) { made.append((id, launches)) }
    }

    /// The mutations the server must have applied or refused: every one the user made when the
    /// apps journal their state (a launch sends what the last one had not), only the running
    /// launch's otherwise (an app that keeps nothing starts afresh).
    func mutationsKept(journaled: Bool) -> [MutationID] {
        made.filter { journaled || $0.launch == launches }.map(\.id)
    }

    /// What the app shows now.
    var state: ClientState? {
        client?.state
    }

    /// What the running launch's resources and queues hold, below its state.
    var diagnosis: String {
        client?.diagnosis ?? "not running"
    }

    /// Stops the launch running now.
    func stop() {
        watching = nil
        client?.stop()
        client = nil
    }
}
