import Foundation
import Logging
import StateLoopServer
import Synchronization
import TasksClient
import TasksModel
import TasksServer
import TasksTerminal
import Testing

/// The terminal client's core against a real server, over real sockets, driven by a script of
/// keys: no terminal.
@Suite("Tasks terminal: end to end", .serialized, .timeLimit(.minutes(6)))
struct TerminalClientTests {
    /// Waits, at most `limit`, until `condition` holds; records `what` as the failure otherwise.
    private static func eventually(
        _ what: String, within limit: Duration = .seconds(60), _ condition: () async throws -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("waited \(limit) in vain: \(what)")
        throw CancellationError()
    }

    @Test("keys add, move, assign and rename a task and filter the board: the server gets each change, and another user's shows at once")
    func scriptedKeys() async throws {
        var logger = Logger(label: "tasks.test")
        logger.logLevel = .critical
        let server = TasksServer(store: try SQLiteStore(), logger: logger)
        try await server.add("ann", to: "p1", named: "Launch")
        try await server.add("bob", to: "p1", named: "Launch")
        let host = SyncHost(logger: logger) { port in .init(server.sync, application: server.application(port: port)) }
        let url = URL(string: "http://127.0.0.1:\(try await host.start())")!
        var clients: [TasksClient] = []
        for user in ["ann", "bob"] {
            let client = try TasksClient(
                server: url, session: try await TasksClient.signIn(server: url, name: user), storePath: nil, reconnectBackoff: .milliseconds(50),
                logger: logger)
            client.start()
            clients.append(client)
        }
        let (ann, bob) = (clients[0], clients[1])
        let serverTask: @Sendable () async throws -> TaskItem? = {
            try await server.sync.read { try $0.rows(of: TasksCollections.tasks, matching: RowQuery(where: [])) }.first
        }

        let session = BoardSession(client: ann, statusInterval: .milliseconds(50))
        let screen = Screen()
        let running = Task {
            // What the host would draw, at a fixed size.
            await session.run { state in screen.frame.withLock { $0 = BoardRenderer.render(state, width: 100, height: 12) } }
            screen.finished.store(true, ordering: .releasing)
        }
        func press(_ keys: [Key]) {
            for key in keys { session.send(.key(key)) }
        }

        try await Self.eventually("ann's board of p1 loaded") { session.state.loaded && session.state.projectID == "p1" }
        press([.character("a")] + Key.typing("ship it\n"))
        try await Self.eventually("the new task under the cursor") { session.state.selectedTask?.title == "ship it" }
        try await Self.eventually("the server has the task") { try await serverTask()?.title == "ship it" }

        press([.character("l")])
        try await Self.eventually("the server has it in doing") { try await serverTask()?.status == .doing }
        #expect(session.state.column == .doing && session.state.selectedTask?.title == "ship it", "the cursor followed the task")

        press([.enter, .character("a"), .character("e"), .control("u")] + Key.typing("ship it now\n") + [.escape])
        try await Self.eventually("the server has it renamed and assigned to ann") {
            let task = try await serverTask()
            return task?.title == "ship it now" && task?.assignee == "ann"
        }

        // The filters make the board's live query again: mine, then todo only, then doing only.
        press([.character("m")])
        try await Self.eventually("mine: ann's task") {
            let state = session.state
            return state.watching?.assignee == "ann" && state.loaded && state.tasks.map(\.title) == ["ship it now"]
        }
        press([.character("s")])
        try await Self.eventually("todo: nothing") {
            let state = session.state
            return state.watching?.status == .todo && state.loaded && state.tasks.isEmpty
        }
        press([.character("s")])
        try await Self.eventually("doing: the task") {
            let state = session.state
            return state.watching?.status == .doing && state.loaded && state.tasks.count == 1
        }
        press([.character("s"), .character("s"), .character("m")])
        try await Self.eventually("all of everyone's again") {
            let state = session.state
            return state.watching == BoardQuery(projectID: "p1") && state.loaded && state.selectedTask?.title == "ship it now"
        }

        // bob's change shows on ann's board as soon as it comes.
        let id = try #require(try await serverTask()?.id)
        try bob.mutate(.prioritize(id: id, priority: 1))
        try await Self.eventually("ann sees bob's change") { session.state.tasks.first?.priority == 1 }
        try await Self.eventually("nothing left to send, both subscriptions live") {
            session.state.sync.pending == 0 && session.state.sync.summary == "live"
        }

        // The frame drawn last shows it all (drawn just after the state changed, so waited for).
        try await Self.eventually("the frame shows the task and the sync") {
            guard let frame = screen.frame.withLock({ $0 }) else { return false }
            return frame.lines[10].contains("sync: live · 0 pending") && frame.lines[4].contains("P1 ship it now")
        }
        let frame = try #require(screen.frame.withLock { $0 })
        #expect(frame.lines[3].contains("[DOING 1]"), "\(frame.text)")
        #expect(frame.lines[4].contains(">P1 ship it now @ann"), "\(frame.text)")

        press([.character("q")])
        try await Self.eventually("the session stopped") { screen.finished.load(ordering: .acquiring) }
        #expect(session.state.quitting)
        await running.value
        try ann.close()
        bob.stop()
        await host.stop()
    }
}

/// What the scripted session drew last, and whether it ended.
private final class Screen: Sendable {
    let frame = Mutex<Frame?>(nil)
    let finished = Atomic(false)
}
