import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import StateLoopServer

/// A to-do backend: sign-in, each user's list, ticked-off items cleared a day later, and how
/// many items are open across all lists.
struct TodoBackend: Sendable {
    struct Item: Codable, Sendable, Equatable {
        var title: String
        var doneAt: Date?  // when it was ticked off
    }

    // The resources: what clients read and follow, each value versioned by the store.
    static let lists = ServerResource("todos", of: [Item].self)
    static let openCount = ServerResource("open-count", of: Int.self)
    static let users = ServerResource("users", of: [String].self)  // who signed in: the lists to clear

    // What clients send: the JSON bodies of the sign-in and the mutations.
    struct SignIn: Codable, Sendable {
        var name: String
        var password: String
    }

    struct Add: Codable, Sendable {
        var title: String
    }

    struct Toggle: Codable, Sendable {
        var index: Int
    }

    /// Who may do what: a request's user is its session's.
    struct Rules: AccessPolicy {
        let sessions: Sessions

        func principal(for request: Request) async throws -> String? {
            guard let token = request.bearerToken else { return nil }
            return try await sessions.user(forToken: token)
        }

        func id(of user: String) -> String { user }

        func mayRead(_ key: ResourceKey, as user: String) -> Bool {
            key.resource == "open-count" || (key.resource == "todos" && key.id == user)
        }

        func mayWrite(_ key: ResourceKey, as user: String) -> Bool {  // what the user's mutations may change
            key.resource == "open-count" || (key.resource == "todos" && key.id == user)
        }
    }

    static let keepDone: TimeInterval = 86_400
    let server: SyncServer<Rules>
    let sessions: Sessions
    let clock: WallClock
    /// Your password check (bcrypt, Argon2): slow, so it runs outside any transaction.
    let checkPassword: @Sendable (_ name: String, _ password: String) async -> Bool

    /// The routes: `POST /login`, `GET /me/todos` (+ `/push`), `GET /open-count` (+ `/push`),
    /// `POST /me/todos` and `POST /me/todos/toggle`.
    init(store: any ServerStore, clock: WallClock = WallClock(), checkPassword: @escaping @Sendable (String, String) async -> Bool) {
        let sessions = Sessions(store: store, clock: clock)
        (self.sessions, self.clock, self.checkPassword) = (sessions, clock, checkPassword)
        server = SyncServer(store: store, access: Rules(sessions: sessions))
        server.serve(Self.lists, at: "me/todos") { user, _ in user }
        server.serve(Self.openCount, at: "open-count") { _, _ in "all" }

        server.mutation(at: "me/todos", body: Add.self, changes: Self.lists, key: { user, _ in user }) { transaction, user, add in
            guard !add.title.isEmpty else { throw MutationRefusal("emptyTitle", "a to-do needs a title") }
            try transaction.write((try transaction.read(Self.lists, user) ?? []) + [Item(title: add.title)], to: Self.lists, user)
            try transaction.write((try transaction.read(Self.openCount, "all") ?? 0) + 1, to: Self.openCount, "all")
        }

        server.mutation(at: "me/todos/toggle", body: Toggle.self, changes: Self.lists, key: { user, _ in user }) { transaction, user, toggle in
            var list = try transaction.read(Self.lists, user) ?? []
            guard list.indices.contains(toggle.index) else {
                throw MutationRefusal("noSuchItem", "there is no item \(toggle.index)", status: 404)
            }
            list[toggle.index].doneAt = list[toggle.index].doneAt == nil ? clock.now : nil
            try transaction.write(list, to: Self.lists, user)
            let change = list[toggle.index].doneAt == nil ? 1 : -1
            try transaction.write((try transaction.read(Self.openCount, "all") ?? 0) + change, to: Self.openCount, "all")
        }
    }

    /// A route of the app's own: `POST /login` answers a session's token, and creates the
    /// account and its empty list at its first sign-in, in the same commit.
    func addRoutes(to router: Router<SyncRequestContext>) {
        router.post("login") { request, context -> Response in
            let signIn = try await request.decode(as: SignIn.self, context: context)
            let name: String
            do throws(AccountName.Refusal) {
                name = try AccountName.checked(signIn.name)  // trimmed, composed, within limits
            } catch {
                throw ErrorResponse(.badRequest, "invalidName", error.description)
            }
            guard await checkPassword(name, signIn.password) else {
                throw ErrorResponse(.unauthorized, "wrongPassword", "wrong name or password")
            }
            let token = try await server.update { transaction in
                let known = try transaction.read(Self.users, "all") ?? []
                if !known.contains(name) {  // a new account, with its empty list
                    try transaction.write(known + [name], to: Self.users, "all")
                    try transaction.write([Item](), to: Self.lists, name)
                }
                return try sessions.issue(to: name, in: transaction)
            }
            return try Response.json(["token": token])
        }
    }

    /// A change that falls due with time: items ticked off a day ago leave their list.
    func clearing() -> TimedUpdate<Rules> {
        TimedUpdate("clear done items", on: server, clock: clock) { transaction in
            try Self.nextClearing(in: transaction)
        } update: { transaction, now in
            for user in try transaction.read(Self.users, "all") ?? [] {  // an unchanged list is not written
                let list = try transaction.read(Self.lists, user) ?? []
                try transaction.write(list.filter { ($0.doneAt ?? now) + Self.keepDone > now }, to: Self.lists, user)
            }
            return try Self.nextClearing(in: transaction)
        }
    }

    /// When the first ticked-off item falls due (a larger app keeps its deadlines in a value).
    static func nextClearing(in transaction: ServerTransaction) throws -> Date? {
        let lists = try (transaction.read(users, "all") ?? []).map { try transaction.read(Self.lists, $0) ?? [] }
        return lists.joined().compactMap(\.doneAt).min().map { $0 + keepDone }
    }

    /// The backend on `port` (0: any free one): the application with its route, the server,
    /// and the timer. A stop closes the push sockets first.
    func host(port: Int) -> SyncHost {
        SyncHost(port: port) { port in
            .init(server, application: server.application(port: port, routes: addRoutes), services: [clearing()])
        }
    }

    /// Runs a backend on `port` until SIGINT or SIGTERM, its data in the file at `path`.
    static func run(path: String, port: Int, checkPassword: @escaping @Sendable (String, String) async -> Bool) async throws {
        let backend = TodoBackend(store: try SQLiteStore(path: path), checkPassword: checkPassword)
        let signals = ServiceGroup(
            services: [backend.host(port: port)], gracefulShutdownSignals: [.sigterm, .sigint], logger: Logger(label: "todos"))
        try await signals.run()
    }
}
