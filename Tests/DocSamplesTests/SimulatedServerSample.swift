import Hummingbird
import StateLoopServer
import StateLoopServerTesting
import StateLoopSimulation
import StateLoopSync
import StateLoopWire

/// The server sample of `Sources/StateLoopSimulation/StateLoopSimulation.docc/StateLoopSimulation.md`:
/// compiled, never run (a simulation takes the whole process's hooks).
enum SimulatedServerSample {
    struct Rules: AccessPolicy {
        func principal(for request: Request) async throws -> String? { request.bearerToken }
        func id(of user: String) -> String { user }
        func mayRead(_ key: ResourceKey, as user: String) -> Bool { true }
        func mayWrite(_ key: ResourceKey, as user: String) -> Bool { true }
    }

    static let board = ServerResource("board", of: [String].self)

    static func sample() throws -> RemoteResource<[String]> {
        // Sources/StateLoopSimulation/StateLoopSimulation.docc/StateLoopSimulation.md:
        let server = SyncServer(store: try SQLiteStore(epoch: 1, blocking: true), access: Rules())
        server.serve(board, at: "board") { _, _ in "main" }
        let router = Router(context: SyncRequestContext.self)
        server.addRoutes(to: router)
        let http = InProcessHTTPClient(router: router, headers: ["Authorization": "Bearer ann"])
        let clock = SimulationClock()
        let resource = RemoteResource<[String]>(
            sources: ResourceSources(pull: {
                let answer = try await http.send("GET", "/board")
                guard answer.status == 200 else { throw HTTPStatusError(status: answer.status) }
                return try answer.decode()
            }),
            clock: clock)
        // End of the example.
        return resource
    }
}
