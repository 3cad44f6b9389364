import Hummingbird
import Logging
import ServiceLifecycle
import StateLoopServer

/// A to-do backend: each user's list, and how many items are open across all lists.
enum TodoBackend {
    struct Item: Codable, Sendable, Equatable {
        var title: String
        var done = false
    }

    // The resources: what clients read and follow, each value versioned by the store.
    static let lists = ServerResource("todos", of: [Item].self)
    static let openCount = ServerResource("open-count", of: Int.self)

    // What clients send: the JSON bodies of the mutations.
    struct Add: Codable, Sendable {
        var title: String
    }

    struct Toggle: Codable, Sendable {
        var index: Int
    }

    /// Who may do what. A real app keeps its sessions in the kit's `Sessions` (below); here, a fixed table.
    struct Rules: AccessPolicy {
        let sessions: [String: String]  // token: user

        func principal(for request: Request) async throws -> String? {
            request.bearerToken.flatMap { sessions[$0] }
        }

        func id(of user: String) -> String { user }

        func mayRead(_ key: ResourceKey, as user: String) -> Bool {
            key.resource == "open-count" || key.id == user
        }

        func mayWrite(_ key: ResourceKey, as user: String) -> Bool {
            key.resource == "todos" && key.id == user
        }
    }

    /// The routes: `GET /me/todos` (+ `/push`), `GET /open-count` (+ `/push`),
    /// `POST /me/todos` and `POST /me/todos/toggle`.
    static func makeServer(store: any ServerStore, sessions: [String: String]) -> SyncServer<Rules> {
        let server = SyncServer(store: store, access: Rules(sessions: sessions))
        server.serve(lists, at: "me/todos") { user, _ in user }
        server.serve(openCount, at: "open-count") { _, _ in "all" }

        server.mutation(at: "me/todos", body: Add.self, changes: lists, key: { user, _ in user }) { transaction, user, add in
            guard !add.title.isEmpty else { throw MutationRefusal("emptyTitle", "a to-do needs a title") }
            var list = try transaction.read(lists, user) ?? []
            list.append(Item(title: add.title))
            try transaction.write(list, to: lists, user)
        }

        server.mutation(at: "me/todos/toggle", body: Toggle.self, changes: lists, key: { user, _ in user }) { transaction, user, toggle in
            var list = try transaction.read(lists, user) ?? []
            guard list.indices.contains(toggle.index) else {
                throw MutationRefusal("noSuchItem", "there is no item \(toggle.index)", status: 404)
            }
            list[toggle.index].done.toggle()
            try transaction.write(list, to: lists, user)
        }
        return server
    }

    /// A server-side change, as a timer would make it: recount the open items of `users`.
    static func recount(_ users: [String], on server: SyncServer<Rules>) async throws {
        try await server.update { transaction in
            let open = try users.reduce(0) { count, user in
                count + (try transaction.read(lists, user) ?? []).filter { !$0.done }.count
            }
            try transaction.write(open, to: openCount, "all")
        }
    }

    /// Runs the backend on `port` until SIGINT or SIGTERM, its data in the file at `path`.
    static func run(path: String, port: Int) async throws {
        let server = makeServer(store: try SQLiteStore(path: path), sessions: ["secret-of-ann": "ann"])
        // The application, and the server beside it: a stop closes its push sockets first.
        let host = SyncHost(port: port) { port in .init(server, application: server.application(port: port)) }
        let signals = ServiceGroup(services: [host], gracefulShutdownSignals: [.sigterm, .sigint], logger: Logger(label: "todos"))
        try await signals.run()
    }
}
