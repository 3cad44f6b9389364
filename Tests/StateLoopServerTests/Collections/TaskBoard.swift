import Foundation
import Hummingbird
import Logging
import ServerTestApp
import StateLoopServer
import StateLoopSync
import StateLoopWire
import Testing

/// A task board on the kit's collections, for the collection tests: tasks in projects, each
/// project's members in a value, the principal from `Bearer t-<user>`.
enum TaskBoard {
    /// Anyone with a `t-<user>` token is `<user>`; the handlers and queries decide the rest.
    struct Rules: AccessPolicy {
        func principal(for request: Request) async throws -> String? {
            guard let token = request.bearerToken, token.hasPrefix("t-") else { return nil }
            return String(token.dropFirst(2))
        }
        func id(of user: String) -> String { user }
        func mayRead(_ key: ResourceKey, as user: String) -> Bool { true }
        func mayWrite(_ key: ResourceKey, as user: String) -> Bool { true }
    }

    /// What `POST /tasks/delete` takes.
    struct Deletion: Codable, Sendable {
        var id: String
    }

    struct TaskRow: Codable, Sendable, Hashable {
        var id: String
        var projectID: String
        var title: String
        var position: Int
        var done: Bool = false
        /// Hidden tasks are readable by nobody.
        var hidden: Bool = false
    }

    static let tasks = RowCollection("tasks", of: TaskRow.self) { $0.id }
        .field("projectID") { $0.projectID }
        .field("position") { $0.position }
        .field("done") { $0.done }
        .field("hidden") { $0.hidden }

    /// Each project's members.
    static let members = ServerResource("members", of: [String].self)

    static let byProject = CollectionQuery<String>("byProject") { transaction, user, parameters in
        let project = try parameters.text("projectID")
        guard try transaction.read(members, project)?.contains(user) == true else { return nil }
        return RowQuery(where: [.init("projectID", equals: .text(project))], orderedBy: [.init("position")])
    }

    /// The first `count` open tasks of a project, by position.
    static let firstOpen = CollectionQuery<String>("firstOpen") { transaction, user, parameters in
        let project = try parameters.text("projectID")
        guard try transaction.read(members, project)?.contains(user) == true else { return nil }
        return RowQuery(
            where: [.init("projectID", equals: .text(project)), .init("done", equals: .bool(false))], orderedBy: [.init("position")],
            limit: Int(try parameters.integer("count")))
    }

    /// The tasks of every project the user is a member of; made again when members change.
    static let mine = CollectionQuery<String>("mine", dependsOn: ["members"]) { transaction, user, _ in
        let projects = try transaction.values(of: members, prefix: "", limit: 1_000).filter { $0.value.contains(user) }.map(\.id)
        return RowQuery(where: [.init("projectID", in: projects.map { .text($0) })], orderedBy: [.init("position")])
    }

    /// ``byProject``, its access made again when members change.
    static let watched = CollectionQuery<String>("watched", dependsOn: ["members"]) { transaction, user, parameters in
        let project = try parameters.text("projectID")
        guard try transaction.read(members, project)?.contains(user) == true else { return nil }
        return RowQuery(where: [.init("projectID", equals: .text(project))], orderedBy: [.init("position")])
    }

    /// A query on a field the collection does not declare: the app's mistake.
    static let byTitle = CollectionQuery<String>("byTitle") { _, _, parameters in
        RowQuery(where: [.init("title", equals: .text(try parameters.text("title")))])
    }

    /// A server on `store` serving the board.
    static func server(store: any ServerStore) -> SyncServer<Rules> {
        var logger = Logger(label: "stateloop.server.test")
        logger.logLevel = .critical
        let server = SyncServer(store: store, access: Rules(), logger: logger)
        server.serve(tasks, at: "tasks", queries: [byProject, firstOpen, byTitle, mine, watched]) { _, fields in fields["hidden"] != .bool(true) }
        // A member of a task's project, before and after, may write it.
        server.mutation(at: "tasks", body: TaskRow.self, changes: tasks, row: { _, task in task.id }) { transaction, user, task in
            let before = try transaction.row(task.id, of: tasks)
            for project in Set([before?.projectID, task.projectID].compactMap { $0 }) {
                guard try transaction.read(members, project)?.contains(user) == true else { throw MutationRefusal.notFound }
            }
            try transaction.write(task, to: tasks)
        }
        server.mutation(at: "tasks/delete", body: Deletion.self, changes: tasks, row: { _, deletion in deletion.id }) { transaction, user, deletion in
            guard let task = try transaction.row(deletion.id, of: tasks) else { return }
            guard try transaction.read(members, task.projectID)?.contains(user) == true else { throw MutationRefusal.notFound }
            try transaction.delete(deletion.id, from: tasks)
        }
        return server
    }

    /// A server on `store` (a new in-memory SQLite store by default) with ann in projects p1
    /// and p2, bob in p2, and `rows` written.
    static func board(_ rows: [TaskRow] = [], store: (any ServerStore)? = nil) async throws -> SyncServer<Rules> {
        let server = Self.server(store: try store ?? SQLiteStore())
        try await server.update { transaction in
            try transaction.write(["ann"], to: members, "p1")
            try transaction.write(["ann", "bob"], to: members, "p2")
            for row in rows { try transaction.write(row, to: tasks) }
        }
        return server
    }

    /// What a subscriber holds: the rows of its query by id, and its cookie.
    struct Subscriber: Sendable {
        /// The rows as StateLoopSync's client holds them, under the protocol's rules.
        private var held = CollectionRows<TaskRow>()

        var rows: [String: VersionedRow<TaskRow>] { held.rows }
        var cookie: String? { held.cookie }

        /// Applies an answer to a request made with the cookie held, as a client does; it
        /// must apply.
        mutating func apply(_ difference: RowsDifference<TaskRow>) throws {
            let outcome = held.apply(difference, requestedWith: held.cookie)
            guard outcome == .applied else { throw NotApplied(outcome: outcome) }
        }

        /// Applies what a push socket received, in order: differences, and no hint (a test
        /// that expects one reads it itself).
        mutating func apply(pushed messages: [String]) throws {
            for message in messages {
                try apply(try JSONDecoder().decode(RowsDifference<TaskRow>.self, from: Data(message.utf8)))
            }
        }

        /// An answer the client's rules refused.
        struct NotApplied: Error {
            let outcome: CollectionRows<TaskRow>.Outcome
        }

        /// The rows' values, by id.
        var values: [String: TaskRow] {
            rows.mapValues(\.value)
        }
    }
}

extension TestClient {
    /// `GET tasks/<query>` as `user` with `parameters` and `cookie`; the status and, for a 200,
    /// the answer.
    func query(
        _ query: String, as user: String, _ parameters: [String: String], cookie: String? = nil
    ) async throws -> (status: Int, difference: RowsDifference<TaskBoard.TaskRow>?, body: Data) {
        var items = parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        if let cookie { items.append("cookie=\(cookie)") }
        let (status, body) = try await send("GET", "/tasks/\(query)?\(items.joined(separator: "&"))", as: user)
        return (status, status == 200 ? try JSONDecoder().decode(RowsDifference<TaskBoard.TaskRow>.self, from: body) : nil, body)
    }

    /// Subscribes `subscriber` anew or catches it up, expecting a 200.
    func refresh(
        _ subscriber: inout TaskBoard.Subscriber, _ parameters: [String: String], query: String = "byProject", as user: String = "ann",
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> RowsDifference<TaskBoard.TaskRow> {
        let answer = try await self.query(query, as: user, parameters, cookie: subscriber.cookie)
        let difference = try #require(
            answer.difference, "answered \(answer.status): \(String(decoding: answer.body, as: UTF8.self))", sourceLocation: sourceLocation)
        try subscriber.apply(difference)
        return difference
    }
}
