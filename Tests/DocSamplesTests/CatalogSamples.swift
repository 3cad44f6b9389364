import Foundation
import Hummingbird
import StateLoop
import StateLoopJournal
import StateLoopServer
import StateLoopSync
import StateLoopSyncTransports

/// The samples of the DocC catalogs' landing pages, compiled.
enum CatalogSamples {
    struct Search: Sendable {
        var query = ""
        var results: [String] = []
        var pendingQuery: String? { query.isEmpty ? nil : query }

        enum Event: Sendable {
            case typed(String)
            case loaded([String])
        }

        static func reduce(_ state: inout Search, _ event: Event) {
            switch event {
            case .typed(let query): state.query = query
            case .loaded(let results): state.results = results
            }
        }
    }

    struct SearchAPI: Sendable {
        var search: @Sendable (String) async -> [String]
    }

    @MainActor
    static func core(api: SearchAPI) {
        // Sources/StateLoop/StateLoop.docc/StateLoop.md:
        let system = System(
            initialState: Search(),
            reduce: Search.reduce,
            feedbacks: [
                .react(query: \.pendingQuery) { query in .loaded(await api.search(query)) }
            ]
        )
        system.send(.typed("gare"))
        // End of the example.
    }

    struct Item: Codable, Sendable {
        var title: String
    }

    typealias Rules = SampleRules

    static func server() throws -> SyncHost {
        // Sources/StateLoopServer/StateLoopServer.docc/StateLoopServer.md:
        let todos = ServerResource("todos", of: [Item].self)
        let server = SyncServer(store: try SQLiteStore(path: "todos.sqlite"), access: Rules())
        server.serve(todos, at: "me/todos") { user, _ in user }
        let host = SyncHost(port: 8080) { port in .init(server, application: server.application(port: port)) }
        // End of the example.
        return host
    }

    struct DriverModeChange: Mutation {
        var on: Bool
        func apply(to value: inout Bool) { value = on }
    }

    static func endpoint(
        token: String, policy: ResourcePolicy, store: JournalMutationStore<DriverModeChange>
    ) -> OptimisticResource<DriverModeChange> {
        // Sources/StateLoopSyncTransports/StateLoopSyncTransports.docc/StateLoopSyncTransports.md:
        let server = SyncEndpoint(server: URL(string: "http://127.0.0.1:8080")!, bearerToken: token, policy: policy)
        let driverMode = server.optimisticResource(at: "/me/driver-mode", for: DriverModeChange.self, store: store)
        // End of the example.
        return driverMode
    }
}
