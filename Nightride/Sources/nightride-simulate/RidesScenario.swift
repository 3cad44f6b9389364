import Foundation
import Logging
import NightrideClient
import NightrideModel
import NightrideServer
import StateLoopServer
import StateLoopServerTesting
import StateLoopSimulation
import StateLoopSync
import StateLoopSyncTransports
import Synchronization

/// Riders and drivers on Nightride's server, all in one simulation: the server as it runs in
/// production (its kit, its rules, its routes, an in-memory store whose transactions run on the
/// simulation's thread), and each user's Nightride client as the terminal app runs it, signed in
/// through `POST /login` and reaching the server through the kit's `InProcessTransport` behind
/// a network that delays every trip, loses requests and answers, cuts push sockets, and goes away
/// for 1 to 12 s once. For the first 20 s, each user acts every few seconds: drivers switch
/// driver mode and take, drive and finish rides; riders ask for rides, cancel them and skip or
/// answer their surveys (the server refuses what its rules do not allow, and the app says so), and the
/// server's timer switches off drivers left idle for 5 to 20 s. The faults fall in those 20 s
/// too: half the users' sessions are ended by the server once (the user, seeing the app signed
/// out, signs in again, and the app starts again with the new session), and in half the runs
/// sessions expire 41 to 50 s after their sign-in (signed in again likewise); the server runs as one
/// to three instances on one store, behind a load balancer (StateLoopServerTesting's
/// `LoadBalancer`), and in half the runs one instance's process crashes once and starts again
/// one to five seconds later (`ServerProcess`); in a third of the runs the data is restored
/// from a backup taken earlier (`SQLiteStore(restoring:after:)`: what was committed since is
/// lost, in a later epoch). In half the runs each app journals its state; half the apps quit
/// once and are launched again, from their journal if they keep one. A user who sees a value
/// shown as failed refreshes it, as a resource that gave up after its retries asks. The network
/// loses nothing from 30 s on.
///
/// Checked at every state an app shows: within a launch, neither its driver mode's nor its
/// ride's confirmed value ever goes back, and every refusal the user is told is a server's
/// 4xx. Checked at 60 s: every app shows what the server holds for its user, with nothing left
/// to send, or shows itself signed out when its session expired; the server applied or refused
/// every mutation the users' actions made but those a signed-out app still holds (all of them
/// when the apps journal, the running launch's otherwise), as a `MutationLedger` between the
/// network and the server saw its answers; and, in runs without a restore, no mutation sent
/// again was answered differently from the first time.
struct RidesScenario {
    let clients: Int
    /// How long users act, and the window of the faults a seed picks (crashes, restores,
    /// relaunches, ended sessions, the outage's start).
    static let active = Duration.seconds(20)
    /// When the network stops losing anything.
    static let calm = Duration.seconds(30)
    /// When every app is checked against the server: long enough after `calm` for the last
    /// inactivity switch-off, its push, and a reconnection's backoff.
    static let check = Duration.seconds(60)
    static let address = URL(string: "http://nightride.simulated")!
    /// How soon an app shows an expired session signed out: Nightride's server checks a push
    /// socket's session every 5 s, then the close crosses the network.
    static let expiryToldWithin = Duration.seconds(7)

    func run(_ simulation: Simulation) async -> [String] {
        let clock = SimulationClock()
        // Drivers idle for 5 to 20 s are switched off by the server's timer, racing their own
        // switches. In half the runs sessions expire 10 to 25 s after their sign-in, all through
        // the run. Every app comes from one address, as scripted clients do: the sign-up limit
        // per address would turn the sixth away for an hour.
        let inactivity = Duration.seconds(simulation.random(in: 5..<20))
        let lifetime = simulation.random(in: 0..<2) == 0 ? Duration.seconds(simulation.random(in: 10..<25)) : nil
        simulation.record(lifetime.map { "sessions expire after \($0)" } ?? "sessions do not expire")
        var configuration = NightrideServer.Configuration(
            inactivityTimeout: inactivity, epoch: 1_800_000_000_000, tokenLifetime: lifetime, loginLimits: .scriptedClients,
            passwordCost: 4)
        configuration.runsOnCallingThread = true
        var logger = Logger(label: "nightride.simulated")
        logger.logLevel = .critical
        let wallStart = Date(timeIntervalSince1970: 1_800_000_000)
        let storeNow: @Sendable () -> Date = { wallStart.addingTimeInterval(Double(clock.now.offset / .milliseconds(1)) / 1_000) }
        let data: ServerData
        do {
            // The data, which outlives a crash of the server's process; timed as the server's
            // own clock times it.
            data = ServerData(try SQLiteStore(epoch: configuration.epoch, now: storeNow, blocking: true))
        } catch {
            return ["the store did not open: \(error)"]
        }
        // One to three instances of the server on the store, behind a load balancer that sends
        // each request and socket to one of those running. Each start of an instance's process
        // is a new instance on the store, its time going on from the wall clock's, its
        // inactivity timer its own: nothing it held in memory (its sockets, its push hub, its
        // sign-in limits) survives a crash.
        let count = 1 + simulation.random(in: 0..<3)
        simulation.record(count == 1 ? "the server runs one instance" : "the server runs \(count) instances")
        var made: [(process: ServerProcess, server: RunningServer)] = []
        do {
            for _ in 0..<count {
                let server = RunningServer()
                let process = try await ServerProcess { [configuration, logger] in
                    let instance = NightrideServer(
                        configuration: configuration, clock: clock, hooks: .init(), logger: logger,
                        wallOrigin: .seconds(1_800_000_000) + clock.now.offset, store: data.store)
                    let (router, sync) = try await instance.routes()
                    let inactivity = instance.inactivityTimer(on: sync)
                    server.started(instance, timer: Task { try? await inactivity?.run() })
                    return InProcessTransport(
                        router: router, server: sync, clock: clock, tick: .milliseconds(500), runsInSimulation: true, logger: logger)
                }
                made.append((process, server))
            }
        } catch {
            return ["the server did not start: \(error)"]
        }
        let instances = made
        let served = LoadBalancer(instances.map(\.process)) { simulation.random(in: 0..<$0) }
        // The server's answers to every mutation, recorded before the network may lose them.
        let ledger = MutationLedger(over: served)
        let outageStart = Duration.milliseconds(simulation.random(in: 2_000..<15_000))
        let outage = outageStart..<(outageStart + .milliseconds(simulation.random(in: 1_000..<12_000)))
        let phones = (0..<clients).map { Phone(number: $0, isDriver: $0 % 2 == 0) }
        // In half the runs each app journals its state in a file of its own, as the terminal
        // app does, so that a relaunch starts from what the last launch showed and sends what
        // it had not; in the others, apps keep their state in memory, and a relaunch starts
        // afresh. On a file system in memory where there is one: a journal commits every state.
        let folder = simulation.random(in: 0..<2) == 0 ? Self.journalFolder() : nil
        simulation.record(folder == nil ? "the apps keep their state in memory" : "the apps journal their state")
        defer { if let folder { try? FileManager.default.removeItem(atPath: folder) } }
        let options = {
            var options = ClientOptions(reconnectBackoff: .seconds(1), clock: clock)
            // Backoffs without jitter: the seed decides enough.
            options.policy.jitter = { $0 }
            return options
        }()
        // In a third of the runs the data is restored from a backup (below).
        let restores = simulation.random(in: 0..<3) == 0
        await withTaskGroup(of: Void.self) { group in
            for phone in phones {
                var options = options
                options.journalPath = folder.map { "\($0)/\(phone.name).journal" }
                group.addTask { [options] in
                    let network = LossyTransport(
                        simulating: simulation, over: ledger, clock: clock, name: phone.name, calm: Self.calm, outage: outage)
                    guard await Self.launch(phone, over: network, options: options, clock: clock, simulation: simulation) else { return }
                    // The user acts every few seconds for the first 20 s, and looks at the
                    // screen until 5 s before the check: a value shown as failed (a resource
                    // gives up after its retries) is refreshed, and a session the server ended
                    // or that expired is signed in again, as a user does.
                    while clock.now.offset < Self.check - .seconds(5) {
                        try? await clock.sleep(for: .milliseconds(simulation.random(in: 300..<4_000)))
                        let state = await phone.state
                        if state?.isSignedOut == true {
                            simulation.record("\(phone.name) is signed out and signs in again")
                            guard await Self.launch(phone, over: network, options: options, clock: clock, simulation: simulation) else { return }
                        } else if let failure = state?.driverMode.health.failure ?? state?.ride.health.failure {
                            simulation.record("\(phone.name) sees \"\(failure)\" and refreshes")
                            await phone.perform(.refresh)
                        } else if clock.now.offset < Self.active {
                            let action = Self.action(of: phone, simulation: simulation)
                            simulation.record("\(phone.name) does \(action)")
                            await phone.perform(action)
                        }
                    }
                }
            }
            // Half the apps quit once in the first minute and are launched again with the same
            // session, from their journal.
            for phone in phones where simulation.random(in: 0..<2) == 0 {
                group.addTask {
                    try? await clock.sleep(for: .milliseconds(simulation.random(in: 0..<20_000)))
                    do {
                        if try await phone.relaunch(simulation: simulation) { simulation.record("\(phone.name)'s app is launched again") }
                    } catch {
                        simulation.record("\(phone.name)'s app did not start again: \(error)")
                    }
                }
            }
            // Half the users' sessions are ended by the server once, in the first minute: their
            // requests are answered 401 and their sockets closed until they sign in again.
            for phone in phones where simulation.random(in: 0..<2) == 0 {
                group.addTask {
                    try? await clock.sleep(for: .milliseconds(simulation.random(in: 0..<20_000)))
                    guard let running = instances.first(where: { $0.process.isRunning }) else { return }
                    simulation.record("the server ends \(phone.name)'s sessions")
                    do {
                        try await running.server.current.revokeSessions(of: phone.name)
                    } catch {
                        simulation.record("\(phone.name)'s sessions could not be ended: \(error)")
                    }
                }
            }
            // In a third of the runs the data is put back from a backup taken earlier in the first
            // minute, as an operator restores one: every instance stops, the store is replaced
            // by the backup in a later epoch, and every instance starts again on it. What was
            // committed since the backup is lost; the apps take the restored values.
            if restores {
                group.addTask {
                    try? await clock.sleep(for: .milliseconds(simulation.random(in: 0..<12_000)))
                    guard let backup = try? data.store.backup() else { return }
                    simulation.record("the data is backed up")
                    try? await clock.sleep(for: .milliseconds(simulation.random(in: 3_000..<8_000)))
                    for instance in instances {
                        instance.process.crash()
                        await instance.server.stopTimer()
                    }
                    do {
                        data.store = try SQLiteStore(restoring: backup, after: data.store.epoch, now: storeNow, blocking: true)
                        simulation.record("the data is restored from the backup, in epoch \(data.store.epoch)")
                    } catch {
                        simulation.record("the data could not be restored: \(error)")
                    }
                    for instance in instances { try? await instance.process.restart() }
                }
            }
            // In half the runs one instance's process crashes once in the first minute, and
            // starts again one to five seconds later on the same store.
            if simulation.random(in: 0..<2) == 0 {
                let crashed = instances[simulation.random(in: 0..<instances.count)]
                group.addTask {
                    try? await clock.sleep(for: .milliseconds(simulation.random(in: 0..<20_000)))
                    simulation.record("an instance's process crashes")
                    crashed.process.crash()
                    await crashed.server.stopTimer()
                    try? await clock.sleep(for: .milliseconds(simulation.random(in: 1_000..<5_000)))
                    simulation.record("the instance's process starts again")
                    do {
                        try await crashed.process.restart()
                    } catch {
                        simulation.record("the server did not start again: \(error)")
                    }
                }
            }
        }
        try? await clock.sleep(until: SimulationClock.Instant(offset: Self.check), tolerance: nil)
        var problems: [String] = []
        for phone in phones {
            problems += await phone.problems
            guard let state = await phone.state else {
                problems.append("\(phone.name) never signed in")
                continue
            }
            problems += await Self.converged(phone, showing: state, server: served, lifetime: lifetime, now: clock.now.offset)
            // Nothing a user did is lost: the server applied or refused each of its mutations,
            // but those an app signed out still holds to send (with a new session).
            let unsettled = ledger.unsettled(await phone.mutationsKept(journaled: folder != nil))
            if unsettled.count > state.driverMode.pendingMutations + state.ride.pendingMutations {
                for id in unsettled { problems.append("\(phone.name)'s mutation \(id) was neither applied nor refused by the server") }
            }
            await phone.stop()
        }
        // Nothing applied twice: a mutation sent again is answered as the first time (a restore
        // makes the server forget its answers since the backup).
        if !restores {
            for id in ledger.appliedTwice() { problems.append("mutation \(id) was answered differently when sent again") }
        }
        for instance in instances { await instance.server.stopTimer() }
        return problems
    }

    /// A new folder for the apps' journals: in memory (`/dev/shm`) where the system has one.
    private static func journalFolder() -> String {
        let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        let folder = "\(base)/nightride-simulate-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    /// Signs `phone`'s user in and launches its app (a launch before it stopped, as the app
    /// starts again with the new session); `false` when it could not.
    private static func launch(
        _ phone: Phone, over network: LossyTransport, options: ClientOptions, clock: SimulationClock, simulation: Simulation
    ) async -> Bool {
        guard let api = await signIn(phone, over: network, clock: clock, simulation: simulation) else { return false }
        do {
            try await phone.launch(api, signedInAt: clock.now.offset, options: options, simulation: simulation)
            return true
        } catch {
            simulation.record("\(phone.name)'s app did not start: \(error)")
            return false
        }
    }

    /// Signs `phone`'s user in (its account made at the first sign-in), trying again a second
    /// later while the network loses the request or its answer.
    private static func signIn(_ phone: Phone, over network: LossyTransport, clock: SimulationClock, simulation: Simulation) async -> NightrideAPI? {
        for _ in 0..<600 {
            do {
                return try await NightrideAPI.login(server: address, name: phone.name, password: "secret-\(phone.number)", transport: network)
            } catch {
                simulation.record("\(phone.name)'s sign-in failed: \(NightrideAPI.message(for: error))")
                try? await clock.sleep(for: .seconds(1))
            }
        }
        return nil
    }

    /// Something `phone`'s user does: a driver's or a rider's.
    private static func action(of phone: Phone, simulation: Simulation) -> UserAction {
        if phone.isDriver {
            let actions: [UserAction] = [.toggleDriverMode, .acceptRide, .arrive, .finishRide, .finishSurvey]
            return actions[simulation.random(in: 0..<actions.count)]
        }
        let places = PlaceCatalog.paris
        let actions: [UserAction] = [
            .requestRide(to: places[simulation.random(in: 0..<places.count)]), .cancelRide, .finishSurvey,
            .rateRide(stars: simulation.random(in: RideAction.stars.lowerBound..<RideAction.stars.upperBound + 1)),
        ]
        return actions[simulation.random(in: 0..<actions.count)]
    }

    /// What is wrong with `state`, the last state `phone` showed, against what the server holds
    /// for its user: a value other than the server's, or something left to send. An app whose
    /// session expired (`lifetime` after its sign-in) must show itself signed out once its
    /// server has had time to tell it (``expiryToldWithin``), and is not compared then; an app
    /// whose session is live must not.
    private static func converged(
        _ phone: Phone, showing state: ClientState, server: LoadBalancer, lifetime: Duration?, now: Duration
    ) async -> [String] {
        guard let token = await phone.token else { return ["\(phone.name) has no session"] }
        let truth = SyncEndpoint(server: address, bearerToken: token, transport: server)
        var problems: [String] = []
        do {
            let driverMode = try await truth.get("/me/driver-mode", as: Versioned<Bool>.self)
            if state.isSignedOut {
                problems.append("\(phone.name) shows itself signed out, but its session is live")
            }
            if state.driverMode.value != driverMode.value || state.driverMode.pendingMutations > 0 {
                problems.append(
                    "\(phone.name) shows driver mode \(String(describing: state.driverMode.value)) with \(state.driverMode.pendingMutations) to send; the server holds \(driverMode.value) at \(driverMode.version)"
                )
            }
            let ride = try await truth.get("/me/ride", as: Versioned<RideStatus>.self)
            if state.ride.value != ride.value || state.ride.pendingMutations > 0 {
                problems.append(
                    "\(phone.name) shows ride \(String(describing: state.ride.value?.phase)) with \(state.ride.pendingMutations) to send; the server holds \(ride.value.phase) at \(ride.version)"
                )
            }
        } catch let error as HTTPStatusError where error.status == 401 && lifetime != nil {
            let expiry = await phone.signedInAt + lifetime!
            if !state.isSignedOut && now > expiry + expiryToldWithin {
                problems.append("\(phone.name)'s session expired at \(expiry), and at \(now) its app does not show it signed out")
            }
        } catch {
            problems.append("\(phone.name)'s values could not be read from the server: \(error)")
        }
        if !problems.isEmpty { problems.append("  \(phone.name): \(await phone.diagnosis)") }
        return problems
    }
}

/// The instance of Nightride's server its process runs now, and that instance's inactivity
/// timer.
private final class RunningServer: Sendable {
    private let running = Mutex<(server: NightrideServer, timer: Task<Void, Never>)?>(nil)

    /// The instance started last.
    var current: NightrideServer {
        running.withLock { $0!.server }
    }

    /// `server` started, with its timer; the last instance's timer is stopped.
    func started(_ server: NightrideServer, timer: Task<Void, Never>) {
        let previous = running.withLock { running in
            defer { running = (server, timer) }
            return running?.timer
        }
        previous?.cancel()
    }

    /// Stops the timer of the instance started last, as its process's end does.
    func stopTimer() async {
        let timer = running.withLock { $0?.timer }
        timer?.cancel()
        await timer?.value
    }
}

/// The server's data: the store its instances start on, which a restore replaces.
private final class ServerData: Sendable {
    private let current: Mutex<SQLiteStore>

    init(_ store: SQLiteStore) {
        current = Mutex(store)
    }

    var store: SQLiteStore {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }
}
