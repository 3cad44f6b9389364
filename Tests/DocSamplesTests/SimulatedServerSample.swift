import Foundation
import Hummingbird
import StateLoopServer
import StateLoopServerTesting
import StateLoopSimulation
import StateLoopSync
import StateLoopSyncTransports
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
        let clock = SimulationClock()
        let transport = InProcessTransport(router: router, server: server, clock: clock, runsInSimulation: true)
        let app = SyncEndpoint(server: URL(string: "http://board.simulated")!, bearerToken: "ann", clock: clock, transport: transport)
        let resource = app.resource(at: "/board", as: [String].self, clientID: ClientID(rawValue: "ann-1"))
        // End of the example.
        return resource
    }
}
