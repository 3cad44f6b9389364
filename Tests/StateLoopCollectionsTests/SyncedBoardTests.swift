import Foundation
import Hummingbird
import Logging
import StateLoopServer
import StateLoopSync
import StateLoopSyncTransports
import StateLoopWire
import TestSupport
import Testing

@_spi(Benchmarks) @testable import StateLoopCollections

/// Local stores synced with the kit's collections over real sockets: what a row change does
/// on the screens of the users who may see it.
@Suite("Collections on the device, end to end", .serialized, .timeLimit(.minutes(6)))
struct SyncedBoardTests {
    typealias TaskRow = Board.TaskRow
    typealias TaskMutation = Board.TaskMutation

    /// Anyone with a `t-<user>` token is `<user>`; queries and handlers decide the rest.
    struct Rules: AccessPolicy {
        func principal(for request: Request) async throws -> String? {
            guard let token = request.bearerToken, token.hasPrefix("t-") else { return nil }
            return String(token.dropFirst(2))
        }
        func id(of user: String) -> String { user }
        func mayRead(_ key: ResourceKey, as user: String) -> Bool { true }
        func mayWrite(_ key: ResourceKey, as user: String) -> Bool { true }
    }

    static let members = ServerResource("members", of: [String].self)

    /// The tasks of a project its members see, access made again when members change.
    static let byProject = CollectionQuery<String>("byProject", dependsOn: ["members"]) { transaction, user, parameters in
        let project = try parameters.text("projectID")
        guard try transaction.read(members, project)?.contains(user) == true else { return nil }
        return Board.project(project)
    }

    /// A server with ann in p1 and p2, bob in p2, and `rows`; the app's own mutation type is
    /// its body, as a shared module gives it to both sides.
    static func server(_ rows: [TaskRow] = []) async throws -> SyncServer<Rules> {
        var logger = Logger(label: "stateloop.collections.test")
        logger.logLevel = .critical
        let server = SyncServer(store: try SQLiteStore(), access: Rules(), logger: logger)
        server.serve(Board.tasks, at: "tasks", queries: [byProject])
        server.mutation(at: "tasks", body: TaskMutation.self, changes: Board.tasks, row: { _, mutation in mutation.rowID }) {
            transaction, user, mutation in
            for (id, row) in try transaction.replay(mutation, on: Board.tasks) {
                let projects = Set([try transaction.row(id, of: Board.tasks)?.projectID, row?.projectID].compactMap { $0 })
                for project in projects where try transaction.read(members, project)?.contains(user) != true {
                    throw MutationRefusal.notFound
                }
                if let row { try transaction.write(row, to: Board.tasks) } else { try transaction.delete(id, from: Board.tasks) }
            }
        }
        try await server.update { transaction in
            try transaction.write(["ann"], to: members, "p1")
            try transaction.write(["ann", "bob"], to: members, "p2")
            for row in rows { try transaction.write(row, to: Board.tasks) }
        }
        return server
    }

    /// A device of `user`: its store, the tasks collection sending to `port`, and the endpoint.
    struct Device {
        let store: LocalStore
        let tasks: LocalCollection<TaskRow, TaskMutation>
        let endpoint: SyncEndpoint

        init(_ user: String, port: Int, store: LocalStore? = nil) throws {
            var policy = ResourcePolicy()
            policy.initialBackoff = .milliseconds(50)
            policy.maxBackoff = .milliseconds(400)
            endpoint = SyncEndpoint(
                server: URL(string: "http://127.0.0.1:\(port)")!, bearerToken: "t-\(user)", policy: policy, reconnectBackoff: .milliseconds(50))
            self.store = try store ?? LocalStore.inMemory(policy: policy)
            tasks = self.store.collection(Board.tasks, mutations: TaskMutation.self, send: endpoint.rowMutations(at: "/tasks"))
        }

        func subscribe(_ project: String) -> RowSubscription {
            tasks.subscribe(endpoint.rows(at: "/tasks", query: "byProject", parameters: ["projectID": project], as: TaskRow.self))
        }
    }

    private static func host(_ server: SyncServer<Rules>, port: Int = 0) -> SyncHost {
        var logger = Logger(label: "stateloop.collections.host")
        logger.logLevel = .critical
        return SyncHost(port: port, logger: logger) { port in .init(server, application: server.application(port: port)) }
    }

    /// Waits until `live` shows `expected` (by title, in order).
    private static func shows(_ live: LiveQuery<TaskRow>, _ expected: [String]) async -> Bool {
        await firstElement(of: live.updates(), within: .seconds(20)) { $0.map(\.title) == expected } != nil
    }

    @Test("a change made on one device reaches another's screen; the maker's change leaves its queue once its rows contain it")
    func changesReachOtherDevices() async throws {
        let server = try await Self.server([Board.task("a", in: "p2", at: 1)])
        let host = Self.host(server)
        let port = try await host.start()
        let ann = try Device("ann", port: port)
        let bob = try Device("bob", port: port)
        let annP1 = ann.subscribe("p1")
        let annP2 = ann.subscribe("p2")
        let bobP2 = bob.subscribe("p2")
        let annScreen = ann.tasks.live(Board.project("p2"))
        let bobScreen = bob.tasks.live(Board.project("p2"))
        #expect(await Self.shows(bobScreen, ["a"]), "bob never saw the first answer")
        // Ann renames the task she sees: her first answer in too (a busy machine delays it).
        #expect(await Self.shows(annScreen, ["a"]), "ann never saw the first answer")
        try ann.tasks.mutate(.rename(id: "a", title: "renamed"))
        try ann.tasks.mutate(.put(Board.task("b", in: "p2", at: 2)))
        #expect(annScreen.rows.map(\.title) == ["renamed", "b"], "not shown at once")
        #expect(await Self.shows(bobScreen, ["renamed", "b"]), "bob never saw ann's changes")
        // Contained in both of ann's subscriptions (p1's result never changed): the queue empties.
        #expect(await eventually { ann.tasks.pendingCount == 0 }, "ann's changes stayed pending: \(ann.tasks.pendingCount)")
        #expect(annScreen.rows.map(\.title) == ["renamed", "b"])
        for subscription in [annP1, annP2, bobP2] { subscription.stop() }
        await host.stop()
    }

    @Test(
        "a first sync larger than a page comes page by page; rows deleted, moved out, added before the pages read next, renamed or deleted ahead while the pages were read are right once caught up"
    )
    func firstSyncInPages() async throws {
        // The kit reads a page of 5,000 rows: three pages, the last not full.
        let pageRows = 5_000
        let count = pageRows * 2 + pageRows / 2
        let name: @Sendable (Int) -> String = { index in "t" + String(index + 100_000).dropFirst() }
        let server = try await Self.server((0..<count).map { Board.task(name($0), in: "p2", at: $0) })
        let host = Self.host(server)
        let port = try await host.start()
        let ann = try Device("ann", port: port)
        let source = ann.endpoint.rows(at: "/tasks", query: "byProject", parameters: ["projectID": "p2"], as: TaskRow.self)
        let asked = Locked<[String?]>([])
        var paged = source
        paged.page = { after, client in
            let page = try await source.page!(after, client)
            let number = asked.withLock { asked in
                asked.append(after)
                return asked.count
            }
            // Between the first page and the second, changes that the later pages see or not.
            if number == 1 {
                try await server.update { transaction in
                    try transaction.delete(name(1), from: Board.tasks)
                    try transaction.write(Board.task(name(2), in: "p1", at: 2), to: Board.tasks)
                    try transaction.write(Board.task("a-new", in: "p2", at: -1), to: Board.tasks)
                    try transaction.write(Board.task(name(count - 10), in: "p2", at: count - 10, title: "renamed"), to: Board.tasks)
                    try transaction.delete(name(count - 9), from: Board.tasks)
                }
            }
            return page
        }
        var titles = ["a-new"] + (0..<count).filter { ![1, 2, count - 9].contains($0) }.map(name)
        titles[titles.firstIndex(of: name(count - 10))!] = "renamed"
        let expected = titles
        let screen = ann.tasks.live(Board.project("p2"))
        let subscription = ann.tasks.subscribe(paged)
        #expect(
            await firstElement(of: screen.updates(), within: .seconds(40)) { $0.map(\.title) == expected } != nil,
            "never the server's result: \(screen.rows.count) rows, the first \(screen.rows.prefix(4).map(\.title))")
        #expect(asked.value == [nil, name(pageRows - 1), name(pageRows * 2 - 1)], "pages asked for: \(asked.value)")
        subscription.stop()
        await host.stop()
    }

    @Test("removed from a project, a user's rows of it leave the device at once, and a resubscription with the old cookie gets nothing back")
    func accessRemovedTakesRowsOff() async throws {
        let server = try await Self.server([Board.task("a", in: "p2", at: 1)])
        let host = Self.host(server)
        let port = try await host.start()
        let bob = try Device("bob", port: port)
        let subscription = bob.subscribe("p2")
        let screen = bob.tasks.live(Board.project("p2"))
        #expect(await Self.shows(screen, ["a"]))
        let cookie = try #require(bob.tasks.cookie(of: subscription.key))
        try await server.update { try $0.write(["ann"], to: Self.members, "p2") }
        #expect(await Self.shows(screen, []), "bob still sees p2's tasks")
        #expect(await eventually { subscription.status == .refused }, "the subscription is \(subscription.status)")
        subscription.stop()
        // The old cookie is refused too: nothing comes back.
        let source = bob.endpoint.rows(at: "/tasks", query: "byProject", parameters: ["projectID": "p2"], as: TaskRow.self)
        await #expect(throws: HTTPStatusError.self) { _ = try await source.fetch(cookie, bob.store.clientID) }
        await host.stop()
    }

    @Test("changes made with the server away are shown at once, sent once it is back, applied once, and every device converges")
    func offlineChangesAreSentOnce() async throws {
        let server = try await Self.server([Board.task("a", in: "p2", at: 1)])
        let host = Self.host(server)
        let port = try await host.start()
        let ann = try Device("ann", port: port)
        let bob = try Device("bob", port: port)
        let subscriptions = [ann.subscribe("p2"), bob.subscribe("p2")]
        let annScreen = ann.tasks.live(Board.project("p2"))
        let bobScreen = bob.tasks.live(Board.project("p2"))
        #expect(await Self.shows(annScreen, ["a"]))
        #expect(await Self.shows(bobScreen, ["a"]))
        await host.stop()
        for index in 1...5 { try ann.tasks.mutate(.put(Board.task("o\(index)", in: "p2", at: 1 + index))) }
        try ann.tasks.mutate(.delete(id: "a"))
        let expected = (1...5).map { "o\($0)" }
        #expect(annScreen.rows.map(\.title) == expected, "offline changes not shown")
        let again = Self.host(server, port: port)
        _ = try await again.start()
        #expect(await Self.shows(bobScreen, expected), "bob never converged")
        #expect(await eventually { ann.tasks.pendingCount == 0 }, "ann's changes stayed pending")
        #expect(annScreen.rows.map(\.title) == expected)
        // Nothing lost, nothing applied twice: the server holds each row at its first version.
        let held = try await ann.endpoint.rows(at: "/tasks", query: "byProject", parameters: ["projectID": "p2"], as: TaskRow.self)
            .fetch(nil, ClientID())
        #expect(held.rows.map(\.value.title) == expected)
        #expect(held.rows.allSatisfy { $0.version.counter == 1 }, "\(held.rows.map(\.version))")
        for subscription in subscriptions { subscription.stop() }
        await again.stop()
    }
}

extension Board.TaskMutation {
    /// The row the mutation is about.
    var rowID: String {
        switch self {
        case .put(let task): task.id
        case .rename(let id, _), .delete(let id): id
        }
    }
}
