import Foundation
import Hummingbird
import Logging
import StateLoopServer
import TasksModel

/// The Tasks backend on StateLoopServer: the tasks and memberships collections, the queries a
/// member may subscribe to, the mutations of tasks (the app's own `TaskMutation`, applied by
/// the server as by the device), and a sign-in.
///
/// A user sees the tasks of the projects they belong to, and only those: every query of tasks
/// is made from the user's memberships, again whenever memberships change, and a mutation is
/// refused unless the user belongs to the task's project before and after it.
public struct TasksServer: Sendable {
    /// Who a request is: the user of its session.
    public struct Access: AccessPolicy {
        let sessions: Sessions

        public func principal(for request: Request) async throws -> String? {
            guard let token = request.bearerToken else { return nil }
            return try await sessions.user(forToken: token)
        }

        public func id(of user: String) -> String { user }
        // The queries and the mutation handler decide; no value resource is served.
        public func mayRead(_ key: ResourceKey, as user: String) -> Bool { true }
        public func mayWrite(_ key: ResourceKey, as user: String) -> Bool { true }
    }

    /// What `POST /login` takes: a demo's sign-in by name alone.
    public struct Login: Codable, Sendable {
        public var name: String

        public init(name: String) {
            self.name = name
        }
    }

    /// What `POST /login` answers.
    public struct Session: Codable, Sendable {
        public var token: String
        public var user: String

        public init(token: String, user: String) {
            self.token = token
            self.user = user
        }
    }

    /// The kit's server, for its host and for server-side changes (`update`).
    public let sync: SyncServer<Access>
    /// The sessions of its users.
    public let sessions: Sessions

    /// The server on `store`.
    public init(store: any ServerStore, logger: Logger = Logger(label: "tasks.server")) {
        let sessions = Sessions(store: store)
        self.sessions = sessions
        sync = SyncServer(store: store, access: Access(sessions: sessions), logger: logger)
        Self.declare(on: sync)
    }

    /// The application on `port`, with the sign-in route.
    public func application(port: Int) -> some ApplicationProtocol {
        sync.application(port: port, routes: addSignIn(to:))
    }

    /// Adds the kit's routes and the sign-in route to `router`: the server without its host,
    /// for a server in the calling process (StateLoopServerTesting's `InProcessTransport`).
    public func addRoutes(to router: Router<SyncRequestContext>) {
        sync.addRoutes(to: router)
        addSignIn(to: router)
    }

    /// `POST /login`: a session for a name alone.
    private func addSignIn(to router: Router<SyncRequestContext>) {
        let (sessions, sync) = (sessions, sync)
        router.post(RouterPath(String(TasksCollections.Path.login.dropFirst()))) { request, context -> Response in
            let login = try await request.decode(as: Login.self, context: context)
            let name = login.name.trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty, name.count <= 32, name.allSatisfy({ $0.isLetter || $0.isNumber }) else {
                return Response.error(.badRequest, "invalidName", "a name is 1 to 32 letters or digits")
            }
            let token = try await sessions.issue(to: name, on: sync)
            return try Response.json(Session(token: token, user: name))
        }
    }

    // MARK: Serving

    private static func declare(on sync: SyncServer<Access>) {
        let tasks = TasksCollections.tasks
        let memberships = TasksCollections.memberships
        sync.serve(memberships, at: String(TasksCollections.Path.memberships.dropFirst()), queries: [myMemberships])
        sync.serve(tasks, at: String(TasksCollections.Path.tasks.dropFirst()), queries: [myTasks, projectTasks])
        sync.mutation(
            at: String(TasksCollections.Path.tasks.dropFirst()), body: TaskMutation.self, changes: tasks, row: { _, mutation in mutation.taskID }
        ) {
            transaction, user, mutation in
            try apply(mutation, by: user, in: transaction)
        }
    }

    /// The user's memberships.
    static let myMemberships = CollectionQuery<String>(TasksCollections.Query.myMemberships) { _, user, _ in
        RowQuery(where: [RowCondition("user", equals: .text(user))], orderedBy: [RowOrder("projectID")])
    }

    /// The tasks of every project the user belongs to; made again when memberships change.
    static let myTasks = CollectionQuery<String>(TasksCollections.Query.myTasks, dependsOn: [TasksCollections.memberships.name]) {
        transaction, user, _ in
        let projects = try projects(of: user, in: transaction)
        return RowQuery(where: [RowCondition("projectID", in: projects.map { .text($0) })], orderedBy: [RowOrder("position")])
    }

    /// One project's tasks, for its members; refused (404) to others.
    static let projectTasks = CollectionQuery<String>(TasksCollections.Query.projectTasks, dependsOn: [TasksCollections.memberships.name]) {
        transaction, user, parameters in
        let project = try parameters.text("projectID")
        guard try projects(of: user, in: transaction).contains(project) else { return nil }
        return TasksCollections.board(project)
    }

    /// The projects `user` belongs to.
    public static func projects(of user: String, in transaction: ServerTransaction) throws -> [String] {
        try transaction.rows(of: TasksCollections.memberships, matching: RowQuery(where: [RowCondition("user", equals: .text(user))]))
            .map(\.projectID)
    }

    /// Applies `mutation` for `user`: the same change the device showed, refused unless the
    /// user belongs to the task's project before and after it.
    static func apply(_ mutation: TaskMutation, by user: String, in transaction: ServerTransaction) throws {
        let tasks = TasksCollections.tasks
        let mine = Set(try projects(of: user, in: transaction))
        for (id, row) in try transaction.replay(mutation, on: tasks) {
            let before = try transaction.row(id, of: tasks)
            for project in [before?.projectID, row?.projectID].compactMap({ $0 }) where !mine.contains(project) {
                throw MutationRefusal.notFound
            }
            if let row {
                guard row.id == id, !row.title.isEmpty, row.title.count <= 200 else {
                    throw MutationRefusal("invalidTask", "a task has an id and a title of 1 to 200 characters", status: 400)
                }
                try transaction.write(row, to: tasks)
            } else {
                try transaction.delete(id, from: tasks)
            }
        }
    }

    // MARK: Projects, on the server's side

    /// Adds `user` to `projectID` (named `name`): their devices subscribe to its tasks at once.
    public func add(_ user: String, to projectID: String, named name: String) async throws {
        try await sync.update { try $0.write(Membership(projectID: projectID, projectName: name, user: user), to: TasksCollections.memberships) }
    }

    /// Removes `user` from `projectID`: its tasks leave their devices at once.
    public func remove(_ user: String, from projectID: String) async throws {
        try await sync.update { try $0.delete("\(projectID):\(user)", from: TasksCollections.memberships) }
    }
}
