import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import StateLoopServer

/// The README's server example, compiled.
enum ReadmeServer {
    struct Item: Codable, Sendable {
        var title: String
    }

    struct Add: Codable, Sendable {
        var title: String
    }

    typealias Rules = SampleRules

    static func sample(logger: Logger) async throws {
        // README.md:
        let todos = ServerResource("todos", of: [Item].self)
        let server = SyncServer(store: try SQLiteStore(path: "todos.sqlite"), access: Rules())
        server.serve(todos, at: "me/todos") { user, _ in user }
        server.mutation(at: "me/todos", body: Add.self, changes: todos, key: { user, _ in user }) { transaction, user, add in
            try transaction.write((try transaction.read(todos, user) ?? []) + [Item(title: add.title)], to: todos, user)
        }
        let host = SyncHost(port: 8080) { port in .init(server, application: server.application(port: port)) }
        try await ServiceGroup(services: [host], gracefulShutdownSignals: [.sigterm], logger: logger).run()
        // End of the example.
    }
}
