import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import StateLoopServer

/// The samples of `Sources/StateLoopServer/StateLoopServer.docc/Server.md` that are not whole files: compiled, and the sessions'
/// sample run.
enum ServerPageSamples {
    struct Account: Codable, Sendable {
        var hash: String
    }

    struct Order: Codable, Sendable {
        var expiresAt: Date
    }

    typealias Rules = SampleRules

    static let accounts = ServerResource("accounts", of: Account.self)
    static let openOrders = ServerResource("open-orders", of: [Order].self)

    /// The sessions' sample, on `store`; the user it finds for the token it issued.
    static func sessions(store: any ServerStore, name: String, hash: String) async throws -> String? {
        let server = SyncServer(store: store, access: Rules())
        let accounts = Self.accounts
        // Sources/StateLoopServer/StateLoopServer.docc/Server.md:
        let time = WallClock()  // in tests: WallClock(testClock, startingAt: someDate)
        let sessions = Sessions(store: store, lifetime: .seconds(30 * 86_400), maximumPerUser: 20, clock: time)

        // POST /login, once the password is checked (outside the transaction: hashing is slow):
        let token = try await server.update { transaction in
            if try transaction.read(accounts, name) == nil { try transaction.write(Account(hash: hash), to: accounts, name) }
            return try sessions.issue(to: name, in: transaction)
        }
        // Every request after (Rules.principal(for:), as the backend above): the token's user, or nil.
        let user = try await sessions.user(forToken: token)
        // Sign out everywhere, and everyone (after a leak):
        try await server.update { try sessions.revoke(of: name, in: $0) }
        try await server.update { try sessions.revokeAll(in: $0) }
        // End of the example.
        return user
    }

    struct TaskRow: Codable, Sendable {
        var id: String
        var projectID: String
        var position: Int
    }

    static let members = ServerResource("members", of: [String].self)

    /// The collections' sample.
    static func collections(server: SyncServer<Rules>) {
        let members = Self.members
        // Sources/StateLoopServer/StateLoopServer.docc/Server.md:
        let tasks = RowCollection("tasks", of: TaskRow.self) { $0.id }
            .field("projectID") { $0.projectID }  // what queries filter and sort on
            .field("position") { $0.position }
        let byProject = CollectionQuery<String>("byProject", dependsOn: ["members"]) { transaction, user, parameters in
            let project = try parameters.text("projectID")
            guard try transaction.read(members, project)?.contains(user) == true else { return nil }  // 404
            return RowQuery(where: [.init("projectID", equals: .text(project))], orderedBy: [.init("position")])
        }
        server.serve(tasks, at: "tasks", queries: [byProject])
        server.mutation(at: "tasks", body: TaskRow.self, changes: tasks, row: { _, task in task.id }) { transaction, user, task in
            guard try transaction.read(members, task.projectID)?.contains(user) == true else { throw MutationRefusal.notFound }
            try transaction.write(task, to: tasks)
        }
        // End of the example.
    }

    /// The timed update's sample.
    static func expiry(server: SyncServer<Rules>, time: WallClock, port: Int, logger: Logger) -> ServiceGroup {
        let openOrders = Self.openOrders
        // Sources/StateLoopServer/StateLoopServer.docc/Server.md:
        let expiry = TimedUpdate("order expiry", on: server, clock: time) { transaction in
            try transaction.read(openOrders, "all")?.map(\.expiresAt).min()  // the next deadline
        } update: { transaction, now in
            var orders = try transaction.read(openOrders, "all") ?? []
            orders.removeAll { $0.expiresAt <= now }
            try transaction.write(orders, to: openOrders, "all")
            return orders.map(\.expiresAt).min()
        }
        let services = ServiceGroup(
            services: [server.application(port: port), expiry, server],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger
        )
        // End of the example.
        return services
    }
}
