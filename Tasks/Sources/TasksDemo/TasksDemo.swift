import Foundation
import Logging
import StateLoopCollections
import StateLoopServer
import StateLoopSync
import StateLoopWire
import Synchronization
import TasksClient
import TasksModel
import TasksServer

/// The demo and the chaos run: a server and three users' devices in one process, over real
/// sockets, editing the same boards while the seed disturbs them (the server restarted, a
/// device relaunched from its file, a device offline for a while, a user removed from a project
/// and added back); then the faults stop, and the verdict says whether every device converged
/// on the server's rows, with nothing lost and nothing left unsent.
public struct TasksDemo: Sendable {
    /// What the run does.
    public struct Plan: Sendable {
        public var seed: UInt64
        /// How many changes the users make, in all.
        public var steps: Int
        /// One step in `faultEvery` disturbs the system instead.
        public var faultEvery: Int
        /// How long to wait for the devices to converge once the faults stop.
        public var settle: Duration

        public init(seed: UInt64, steps: Int = 60, faultEvery: Int = 8, settle: Duration = .seconds(60)) {
            self.seed = seed
            self.steps = steps
            self.faultEvery = faultEvery
            self.settle = settle
        }
    }

    /// What the run found.
    public struct Verdict: Sendable, CustomStringConvertible {
        public var seed: UInt64
        public var changes = 0
        public var refused = 0
        public var faults: [String] = []
        /// What went wrong; empty when the run passed.
        public var problems: [String] = []

        public var passed: Bool { problems.isEmpty }

        public var description: String {
            var lines = [
                "seed \(seed): \(changes) changes (\(refused) refused by the server), faults: \(faults.isEmpty ? "none" : faults.joined(separator: ", "))"
            ]
            if passed {
                lines.append("PASS: every device converged on the server's rows; nothing lost, nothing left unsent")
            } else {
                lines.append("FAIL:")
                lines += problems.map { "  - \($0)" }
            }
            return lines.joined(separator: "\n")
        }
    }

    static let users = ["ann", "bob", "cat"]
    static let projects: [(id: String, name: String, members: [String])] = [
        ("p1", "Launch", ["ann", "bob"]), ("p2", "Ops", ["bob", "cat"]), ("p3", "Design", ["ann", "cat"]),
    ]

    let plan: Plan
    let logger: Logger

    public init(plan: Plan, logger: Logger = Logger(label: "tasks.demo")) {
        self.plan = plan
        self.logger = logger
    }

    /// Runs the plan; `progress` hears what happens.
    public func run(progress: @Sendable (String) -> Void = { _ in }) async throws -> Verdict {
        var random = SeededRandom(seed: plan.seed)
        var verdict = Verdict(seed: plan.seed)
        var quiet = Logger(label: "tasks.demo.quiet")
        quiet.logLevel = .critical
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tasks-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        let server = TasksServer(store: try SQLiteStore(), logger: quiet)
        for project in Self.projects {
            for user in project.members { try await server.add(user, to: project.id, named: project.name) }
        }
        var host = Self.host(server, port: 0, logger: quiet)
        let port = try await host.start()
        let url = URL(string: "http://127.0.0.1:\(port)")!
        var policy = ResourcePolicy()
        policy.initialBackoff = .milliseconds(50)
        policy.maxBackoff = .milliseconds(500)
        var sessions: [String: TasksSessionAnswer] = [:]
        var devices: [String: TasksClient] = [:]
        for user in Self.users {
            sessions[user] = try await TasksClient.signIn(server: url, name: user)
            devices[user] = try Self.device(user, url: url, session: sessions[user]!, folder: folder, policy: policy, logger: quiet)
        }
        progress("server on port \(port); \(Self.users.joined(separator: ", ")) signed in")
        var offline: Set<String> = []
        var removed: [(user: String, project: String)] = []
        let refusals = RefusalCounter()
        var listeners: [Task<Void, Never>] = []
        func listen(_ device: TasksClient) {
            listeners.append(
                Task {
                    for await refusal in device.tasks.refusals() {
                        // The server refuses a change only to a project the user is not in (404);
                        // any other refusal is a change the demo made wrong, or one lost.
                        refusals.add(
                            unexpected: (refusal.error as? HTTPStatusError)?.status == 404
                                ? nil : "\(refusal.mutation.map { "\($0)" } ?? "a dropped change"): \(refusal.message)")
                    }
                })
        }
        for device in devices.values { listen(device) }

        for step in 0..<plan.steps {
            if step > 0 && step % plan.faultEvery == 0 {
                switch random.next(upperBound: 4) {
                case 0:
                    progress("fault: the server restarts")
                    verdict.faults.append("server restart")
                    await host.stop()
                    try await Task.sleep(for: .milliseconds(random.next(upperBound: 300)))
                    host = Self.host(server, port: port, logger: quiet)
                    _ = try await host.start()
                case 1:
                    let user = Self.users[random.next(upperBound: Self.users.count)]
                    progress("fault: \(user)'s device relaunches from its file")
                    verdict.faults.append("\(user) relaunch")
                    try devices[user]!.close()
                    devices[user] = nil
                    let device = try Self.device(user, url: url, session: sessions[user]!, folder: folder, policy: policy, logger: quiet)
                    devices[user] = device
                    listen(device)
                    if offline.contains(user) { device.stop() }
                case 2:
                    let user = Self.users[random.next(upperBound: Self.users.count)]
                    if offline.remove(user) != nil {
                        progress("fault over: \(user) is back online")
                        devices[user]!.start()
                    } else {
                        progress("fault: \(user) goes offline")
                        verdict.faults.append("\(user) offline")
                        offline.insert(user)
                        devices[user]!.stop()
                    }
                default:
                    if let back = removed.popLast() {
                        progress("fault over: \(back.user) is added back to \(back.project)")
                        try await server.add(back.user, to: back.project, named: Self.projects.first { $0.id == back.project }!.name)
                    } else {
                        let project = Self.projects[random.next(upperBound: Self.projects.count)]
                        let user = project.members[random.next(upperBound: project.members.count)]
                        progress("fault: \(user) is removed from \(project.id)")
                        verdict.faults.append("\(user) removed from \(project.id)")
                        removed.append((user, project.id))
                        try await server.remove(user, from: project.id)
                    }
                }
                continue
            }
            let user = Self.users[random.next(upperBound: Self.users.count)]
            let device = devices[user]!
            let mine = Self.projects.filter { $0.members.contains(user) }.map(\.id)
            let project = mine[random.next(upperBound: mine.count)]
            let board = device.board(project)
            let tasks = board.rows
            board.stop()
            let mutation: TaskMutation
            if tasks.isEmpty || random.next(upperBound: 4) == 0 {
                let task = TaskItem(
                    id: "\(user)-\(step)", projectID: project, title: "task \(step) by \(user)", position: Double(random.next(upperBound: 1_000)))
                mutation = .add(task)
            } else {
                let task = tasks[random.next(upperBound: tasks.count)]
                switch random.next(upperBound: 6) {
                case 0: mutation = .rename(id: task.id, title: "\(task.title)'")
                case 1:
                    mutation = .move(
                        id: task.id, to: TaskItem.Status.allCases[random.next(upperBound: 3)], position: Double(random.next(upperBound: 1_000)))
                case 2: mutation = .assign(id: task.id, to: Self.users[random.next(upperBound: 3)])
                case 3: mutation = .prioritize(id: task.id, priority: 1 + random.next(upperBound: 3))
                case 4: mutation = .transfer(id: task.id, to: mine[random.next(upperBound: mine.count)])
                default: mutation = .delete(id: task.id)
                }
            }
            try device.mutate(mutation)
            verdict.changes += 1
            try await Task.sleep(for: .milliseconds(random.next(upperBound: 40)))
        }

        progress("faults stop: everyone back online and in their projects")
        for back in removed { try await server.add(back.user, to: back.project, named: Self.projects.first { $0.id == back.project }!.name) }
        for user in offline { devices[user]!.start() }
        let settled = ContinuousClock.now + plan.settle
        var problems: [String] = []
        repeat {
            problems = try await Self.check(devices, server: server)
            if problems.isEmpty { break }
            try await Task.sleep(for: .milliseconds(100))
        } while ContinuousClock.now < settled
        verdict.problems = problems + refusals.unexpected.map { "refused: \($0)" }
        verdict.refused = refusals.count
        for device in devices.values { device.stop() }
        for listener in listeners { listener.cancel() }
        await host.stop()
        return verdict
    }

    /// What differs between the devices and the server now; empty once every device holds
    /// exactly the server's rows of its projects, and has nothing left to send.
    package static func check(_ devices: [String: TasksClient], server: TasksServer) async throws -> [String] {
        var problems: [String] = []
        for user in devices.keys.sorted() {
            let device = devices[user]!
            let (projects, truth) = try await server.sync.read { transaction in
                let projects = try TasksServer.projects(of: user, in: transaction).sorted()
                let tasks = try transaction.rows(
                    of: TasksCollections.tasks,
                    matching: RowQuery(where: [RowCondition("projectID", in: projects.map { .text($0) })], orderedBy: [RowOrder("position")]))
                return (projects, tasks)
            }
            let pending = device.tasks.pendingCount
            if pending > 0 { problems.append("\(user): \(pending) changes not yet in every subscription") }
            let shownProjects = device.projects()
            defer { shownProjects.stop() }
            if shownProjects.rows.map(\.projectID).sorted() != projects {
                problems.append("\(user): projects \(shownProjects.rows.map(\.projectID).sorted()), the server says \(projects)")
            }
            let all = device.tasks.live(RowQuery(orderedBy: [RowOrder("position")]))
            defer { all.stop() }
            let shown = Dictionary(all.rows.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            let held = Dictionary(truth.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            for (id, task) in held where shown[id] != task {
                problems.append("\(user): task \(id) \(shown[id] == nil ? "missing" : "differs from the server's")")
            }
            for id in shown.keys where held[id] == nil {
                problems.append("\(user): shows task \(id), which the server does not hold in \(user)'s projects")
            }
        }
        return problems
    }

    static func host(_ server: TasksServer, port: Int, logger: Logger) -> SyncHost {
        SyncHost(port: port, logger: logger) { port in .init(server.sync, application: server.application(port: port)) }
    }

    static func device(
        _ user: String, url: URL, session: TasksSessionAnswer, folder: URL, policy: ResourcePolicy, logger: Logger
    ) throws -> TasksClient {
        let device = try TasksClient(
            server: url, session: session, storePath: folder.appendingPathComponent("\(user).sqlite").path, policy: policy,
            reconnectBackoff: .milliseconds(50), logger: logger)
        device.start()
        return device
    }
}

/// Counts the refusals the devices report.
final class RefusalCounter: Sendable {
    private let value = Mutex((count: 0, unexpected: [String]()))

    func add(unexpected: String?) {
        value.withLock { value in
            value.count += 1
            if let unexpected { value.unexpected.append(unexpected) }
        }
    }

    var count: Int { value.withLock { $0.count } }
    var unexpected: [String] { value.withLock { $0.unexpected } }
}

/// SplitMix64: the demo's choices, fixed by its seed.
struct SeededRandom {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next(upperBound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(upperBound))
    }
}
