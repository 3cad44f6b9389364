import Foundation
import StateLoopJournal
import StateLoopSync
import StateLoopSyncTransports

/// The README's endpoint example, compiled.
enum ReadmeEndpoint {
    struct DriverModeChange: Mutation {
        var on: Bool
        func apply(to value: inout Bool) { value = on }
    }

    struct Place: Codable, Sendable {
        var name: String
    }

    struct App: Codable, Sendable {}

    enum AppEvent: Codable, Sendable {
        case opened
    }

    static func sample(token: String, policy: ResourcePolicy, journal: Journal<App, AppEvent>) async throws {
        // README.md:
        let server = SyncEndpoint(server: URL(string: "http://127.0.0.1:8080")!, bearerToken: token, policy: policy)
        let driverMode = server.optimisticResource(
            at: "/me/driver-mode", for: DriverModeChange.self,
            store: journal.mutationStore(named: "driver-mode", for: DriverModeChange.self))
        driverMode.mutate(DriverModeChange(on: true))  // shown at once, sent in order, once
        let places = try await server.get("/places?q=gare", as: [Place].self)
        // End of the example.
        _ = places
    }
}
