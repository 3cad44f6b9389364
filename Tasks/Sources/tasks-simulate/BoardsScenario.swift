import Foundation
import Hummingbird
import Logging
import StateLoopCollections
import StateLoopServer
import StateLoopServerTesting
import StateLoopSimulation
import StateLoopSync
import StateLoopSyncTransports
import Synchronization
import TasksClient
import TasksDemo
import TasksModel
import TasksServer

/// Team members editing shared boards, all in one simulation: Tasks' server as it runs (its
/// collections, queries, mutation rules and sign-in, on an in-memory store whose transactions
/// run on the simulation's thread), and each member's device as the app runs it (its local
/// store in memory, its subscriptions and queue of changes), reaching the server through the
/// kit's `InProcessTransport` behind a network that delays every trip, loses requests and
/// answers, cuts push sockets, and goes away for up to 20 s. Until the faults stop, members add,
/// rename, move, assign, prioritize, transfer and delete tasks of their projects; devices go
/// offline and come back; members are removed from a project and added back, while their
/// changes to it are on their way; and the server's process crashes and starts again one to
/// five seconds later on the same store (`ServerProcess`).
///
/// Checked as it runs: the server refuses only a change to a project its member is no longer
/// in (404). Checked once the faults stop (everyone back online and in their projects): within
/// a minute, every device holds exactly the server's tasks of its member's projects, with
/// nothing left to send; and no task a member added is missing from the server unless the
/// server refused it or someone deleted it.
struct BoardsScenario {
    let users: Int
    /// When the faults stop.
    static let calm = Duration.seconds(60)
    static let address = URL(string: "http://tasks.simulated")!

    /// Member `n`'s name.
    static func name(_ number: Int) -> String { "user\(number)" }

    /// The projects, each with two or three members: member `n` is in `p(n mod 3)` and
    /// `p((n + 1) mod 3)`.
    func projects() -> [(id: String, members: [String])] {
        (0..<3).map { project in
            ("p\(project)", (0..<users).filter { $0 % 3 == project || ($0 + 1) % 3 == project }.map(Self.name))
        }
    }

    func run(_ simulation: Simulation) async -> [String] {
        let clock = SimulationClock()
        var logger = Logger(label: "tasks.simulated")
        logger.logLevel = .critical
        let store: SQLiteStore
        do {
            store = try SQLiteStore(epoch: 1, blocking: true)
        } catch {
            return ["the store did not open: \(error)"]
        }
        let server = Instance()
        // Each start of the process is a new instance of the server on the store: nothing it
        // held in memory (its sockets, its push hub) survives a crash.
        let process: ServerProcess
        do {
            process = try await ServerProcess { [logger] in
                let instance = TasksServer(store: store, logger: logger)
                server.current = instance
                let router = Router(context: SyncRequestContext.self)
                instance.addRoutes(to: router)
                return InProcessTransport(
                    router: router, server: instance.sync, clock: clock, tick: .milliseconds(500), runsInSimulation: true, logger: logger)
            }
            for project in projects() {
                for user in project.members { try await server.current.add(user, to: project.id, named: project.id) }
            }
        } catch {
            return ["the server did not start: \(error)"]
        }
        let outageStart = Duration.milliseconds(simulation.random(in: 5_000..<40_000))
        let outage = outageStart..<(outageStart + .milliseconds(simulation.random(in: 1_000..<20_000)))
        var policy = ResourcePolicy()
        policy.initialBackoff = .milliseconds(100)
        policy.maxBackoff = .seconds(2)
        policy.jitter = { $0 }
        let problems = Problems()
        var devices: [String: TasksClient] = [:]
        var listeners: [Task<Void, Never>] = []
        for number in 0..<users {
            let user = Self.name(number)
            let network = LossyTransport(simulating: simulation, over: process, clock: clock, name: user, calm: Self.calm, outage: outage)
            guard let session = await Self.signIn(user, over: network, clock: clock, simulation: simulation) else {
                return ["\(user) never signed in"]
            }
            do {
                let store = try LocalStore.inMemory(policy: policy, clock: clock, clientID: ClientID(rawValue: "\(user)-device"), blocking: true)
                let device = TasksClient(
                    server: Self.address, session: session, store: store, policy: policy, reconnectBackoff: .milliseconds(500), clock: clock,
                    transport: network, logger: logger)
                device.start()
                devices[user] = device
                listeners.append(
                    Task {
                        for await refusal in device.tasks.refusals() {
                            simulation.record("\(user)'s change \(refusal.id.rawValue) is refused: \(refusal.message)")
                            if case .add(let task) = refusal.mutation { problems.refusedAdd(task.id) }
                            // Only a change to a project its member is not in is refused (404).
                            if (refusal.error as? HTTPStatusError)?.status != 404 {
                                problems.add("\(user)'s change \(refusal.id.rawValue) was refused: \(refusal.message)")
                            }
                        }
                    })
            } catch {
                return ["\(user)'s device did not start: \(error)"]
            }
        }
        let faults = Faults(server: server, process: process, clock: clock, devices: devices, projects: projects(), simulation: simulation)
        await withTaskGroup(of: Void.self) { group in
            for (user, device) in devices.sorted(by: { $0.key < $1.key }) {
                group.addTask {
                    var made = 0
                    while clock.now.offset < Self.calm {
                        try? await clock.sleep(for: .milliseconds(simulation.random(in: 200..<3_000)))
                        guard let mutation = self.change(by: user, on: device, made: made, simulation: simulation) else { continue }
                        made += 1
                        simulation.record("\(user) makes \(mutation)")
                        problems.made(mutation)
                        do {
                            try device.mutate(mutation)
                        } catch {
                            problems.add("\(user)'s change could not be made: \(error)")
                        }
                    }
                }
            }
            group.addTask {
                while clock.now.offset < Self.calm {
                    try? await clock.sleep(for: .milliseconds(simulation.random(in: 2_000..<10_000)))
                    guard clock.now.offset < Self.calm else { break }
                    await faults.next()
                }
            }
        }
        await faults.end()
        // Once the faults stop, every device converges within a minute.
        var left: [String] = []
        for _ in 0..<60 {
            do {
                left = try await TasksDemo.check(devices, server: server.current)
            } catch {
                left = ["the check could not read the server: \(error)"]
            }
            if left.isEmpty { break }
            try? await clock.sleep(for: .seconds(1))
        }
        do {
            let held = try await server.current.sync.read { try $0.rows(of: TasksCollections.tasks, matching: RowQuery()) }
            left += problems.lost(held: Set(held.map(\.id)))
        } catch {
            left.append("the server's tasks could not be read: \(error)")
        }
        for device in devices.values { try? device.close() }
        for listener in listeners {
            listener.cancel()
            await listener.value
        }
        return left + problems.all
    }

    /// A change `user` makes now to one of their projects, as seen on their device; `nil` when
    /// they are in none at the moment.
    private func change(by user: String, on device: TasksClient, made: Int, simulation: Simulation) -> TaskMutation? {
        let shown = device.projects()
        let mine = shown.rows.map(\.projectID)
        shown.stop()
        guard !mine.isEmpty else { return nil }
        let project = mine[simulation.random(in: 0..<mine.count)]
        let board = device.board(project)
        let tasks = board.rows
        board.stop()
        if tasks.isEmpty || simulation.random(in: 0..<4) == 0 {
            return .add(
                TaskItem(
                    id: "\(user)-\(made)", projectID: project, title: "task \(made) by \(user)", position: Double(simulation.random(in: 0..<1_000))))
        }
        let task = tasks[simulation.random(in: 0..<tasks.count)]
        switch simulation.random(in: 0..<6) {
        case 0: return .rename(id: task.id, title: "\(task.title)'")
        case 1:
            return .move(id: task.id, to: TaskItem.Status.allCases[simulation.random(in: 0..<3)], position: Double(simulation.random(in: 0..<1_000)))
        case 2: return .assign(id: task.id, to: Self.name(simulation.random(in: 0..<users)))
        case 3: return .prioritize(id: task.id, priority: 1 + simulation.random(in: 0..<3))
        case 4: return .transfer(id: task.id, to: mine[simulation.random(in: 0..<mine.count)])
        default: return .delete(id: task.id)
        }
    }

    /// Signs `user` in, trying again a second later while the network loses the request or its
    /// answer.
    private static func signIn(_ user: String, over network: LossyTransport, clock: SimulationClock, simulation: Simulation) async
        -> TasksSessionAnswer?
    {
        for _ in 0..<600 {
            do {
                return try await TasksClient.signIn(server: address, name: user, transport: network)
            } catch {
                simulation.record("\(user)'s sign-in failed: \(error)")
                try? await clock.sleep(for: .seconds(1))
            }
        }
        return nil
    }
}

/// What the run found wrong as it went, and what the members did: the tasks added, deleted,
/// and added but refused.
private final class Problems: Sendable {
    private let found = Mutex<[String]>([])
    private let ledger = Mutex((added: [String](), deleted: Set<String>(), refused: Set<String>()))

    func add(_ problem: String) { found.withLock { $0.append(problem) } }
    var all: [String] { found.withLock { $0 } }

    func made(_ mutation: TaskMutation) {
        ledger.withLock { ledger in
            switch mutation {
            case .add(let task): ledger.added.append(task.id)
            case .delete(let id): ledger.deleted.insert(id)
            default: break
            }
        }
    }

    func refusedAdd(_ id: String) { ledger.withLock { _ = $0.refused.insert(id) } }

    /// The tasks added that the server does not hold (`held`), though it refused none of them
    /// and nobody deleted them: lost.
    func lost(held: Set<String>) -> [String] {
        ledger.withLock { ledger in
            ledger.added.filter { !held.contains($0) && !ledger.deleted.contains($0) && !ledger.refused.contains($0) }
                .map { "task \($0) was added, neither refused nor deleted, and the server does not hold it" }
        }
    }
}

/// The instance of the server the process runs now (the last one started).
private final class Instance: Sendable {
    private let running = Mutex<TasksServer?>(nil)

    var current: TasksServer {
        get { running.withLock { $0! } }
        set { running.withLock { $0 = newValue } }
    }
}

/// The faults of the members and the server: a device offline and back, a member removed from
/// a project and added back, the server's process crashed and started again.
private actor Faults {
    let server: Instance
    let process: ServerProcess
    let clock: SimulationClock
    let devices: [String: TasksClient]
    let projects: [(id: String, members: [String])]
    let simulation: Simulation
    private var offline: Set<String> = []
    private var removed: [(user: String, project: String)] = []

    init(
        server: Instance, process: ServerProcess, clock: SimulationClock, devices: [String: TasksClient], projects: [(id: String, members: [String])],
        simulation: Simulation
    ) {
        self.server = server
        self.process = process
        self.clock = clock
        self.devices = devices
        self.projects = projects
        self.simulation = simulation
    }

    /// One fault, or the end of one.
    func next() async {
        let users = devices.keys.sorted()
        let kind = simulation.random(in: 0..<5)
        if kind == 0 {
            simulation.record("the server's process crashes")
            process.crash()
            try? await clock.sleep(for: .milliseconds(simulation.random(in: 1_000..<5_000)))
            simulation.record("the server's process starts again")
            try? await process.restart()
        } else if kind < 3 {
            let user = users[simulation.random(in: 0..<users.count)]
            if offline.remove(user) != nil {
                simulation.record("\(user)'s device is back online")
                devices[user]?.start()
            } else {
                simulation.record("\(user)'s device goes offline")
                offline.insert(user)
                devices[user]?.stop()
            }
        } else if let back = removed.popLast() {
            simulation.record("\(back.user) is added back to \(back.project)")
            try? await server.current.add(back.user, to: back.project, named: back.project)
        } else {
            let project = projects[simulation.random(in: 0..<projects.count)]
            guard !project.members.isEmpty else { return }
            let user = project.members[simulation.random(in: 0..<project.members.count)]
            simulation.record("\(user) is removed from \(project.id)")
            removed.append((user, project.id))
            try? await server.current.remove(user, from: project.id)
        }
    }

    /// Ends every fault: every device online, every member back in their projects.
    func end() async {
        for back in removed { try? await server.current.add(back.user, to: back.project, named: back.project) }
        removed = []
        for user in offline.sorted() { devices[user]?.start() }
        offline = []
    }
}
