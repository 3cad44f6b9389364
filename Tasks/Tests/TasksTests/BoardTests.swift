import Foundation
import Logging
import StateLoopCollections
import StateLoopServer
import StateLoopSync
import TasksClient
import TasksModel
import TasksServer
import Testing

/// Tasks' rules between two users' devices, over real sockets.
@Suite("Tasks: boards", .serialized, .timeLimit(.minutes(6)))
struct BoardTests {
    /// A server with ann in p1 and p2, bob in p1 only, both devices started.
    private static func start() async throws -> (SyncHost, TasksServer, ann: TasksClient, bob: TasksClient) {
        var logger = Logger(label: "tasks.test")
        logger.logLevel = .critical
        let server = TasksServer(store: try SQLiteStore(), logger: logger)
        try await server.add("ann", to: "p1", named: "Launch")
        try await server.add("bob", to: "p1", named: "Launch")
        try await server.add("ann", to: "p2", named: "Ops")
        let host = SyncHost(logger: logger) { port in .init(server.sync, application: server.application(port: port)) }
        let url = URL(string: "http://127.0.0.1:\(try await host.start())")!
        var devices: [TasksClient] = []
        for user in ["ann", "bob"] {
            let client = try TasksClient(
                server: url, session: try await TasksClient.signIn(server: url, name: user), storePath: nil, reconnectBackoff: .milliseconds(50),
                logger: logger)
            client.start()
            devices.append(client)
        }
        return (host, server, devices[0], devices[1])
    }

    /// Waits, at most a minute, until `live` shows `titles`.
    private static func shows(_ live: LiveQuery<TaskItem>, _ titles: [String]) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if live.rows.map(\.title) == titles { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    @Test("a task moved to a project someone cannot see leaves their board; members see it move")
    func transferLeavesTheBoardsOfNonMembers() async throws {
        let (host, _, ann, bob) = try await Self.start()
        let bobsBoard = bob.board("p1")
        let annsP2 = ann.board("p2")
        let task = try ann.add("ship it", to: "p1")
        #expect(await Self.shows(bobsBoard, ["ship it"]), "bob never saw the task")
        try ann.mutate(.transfer(id: task.id, to: "p2"))
        #expect(await Self.shows(annsP2, ["ship it"]), "ann's p2 board never showed it")
        #expect(await Self.shows(bobsBoard, []), "bob still sees a task of a project he is not in")
        #expect(try bob.tasks.row(task.id) == nil, "the row stayed on bob's device")
        ann.stop()
        bob.stop()
        await host.stop()
    }

    @Test("a non-member's change is refused and rolled back alone; a user removed from a project loses its tasks at once")
    func membersOnly() async throws {
        let (host, server, ann, bob) = try await Self.start()
        let annsP2 = ann.board("p2")
        _ = try ann.add("secret", to: "p2")
        #expect(await Self.shows(annsP2, ["secret"]))
        // bob writes into p2, which he is not in: refused, and only that change is undone.
        let stream = bob.tasks.refusals()
        let bobsP2 = bob.board("p2")
        let bobsP1 = bob.board("p1")
        try bob.mutate(.add(TaskItem(id: "sneak", projectID: "p2", title: "sneak", position: 1)))
        _ = try bob.add("mine", to: "p1")
        var refusals = stream.makeAsyncIterator()
        let refused = await refusals.next()
        #expect(refused?.mutation?.taskID == "sneak")
        #expect(await Self.shows(bobsP2, []))
        #expect(await Self.shows(bobsP1, ["mine"]))
        // bob is removed from p1: its tasks leave his device.
        try await server.remove("bob", from: "p1")
        #expect(await Self.shows(bobsP1, []), "bob still sees p1's tasks")
        ann.stop()
        bob.stop()
        await host.stop()
    }
}
